package catalog_test

import (
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/jadpo/jadpo/lang/lockfile"
	"github.com/jadpo/jadpo/providers/catalog"
)

const resendPackage = "Resend.v1"

func TestResendFiles(t *testing.T) {
	files := catalog.Files(resendPackage)
	var paths []string
	for p := range files {
		paths = append(paths, p)
	}
	slices.Sort(paths)
	want := []string{"package.jadpo", "provides/email.jadpo", "resources/emails.jadpo"}
	if !slices.Equal(paths, want) {
		t.Fatalf("files %v, want %v", paths, want)
	}
	if name, err := lockfile.HeaderName(files["package.jadpo"]); err != nil || name != resendPackage {
		t.Errorf("header %q %v", name, err)
	}
}

// The package describes Resend's POST /emails as its reference documents it
// (https://resend.com/docs/api-reference/emails/send-email): a bearer API
// key, a flat JSON body whose members are named from, to, subject, text and
// html, and errors whose `name` is the code.
func TestResendDescribesTheAPI(t *testing.T) {
	files := catalog.Files(resendPackage)
	pkg := string(files["package.jadpo"])
	for _, want := range []string{"protocol: Protocol.json_http", "credential: CredentialScheme.bearer",
		`host: "https://api.resend.com"`, `error_code: "name"`, "from: Sender"} {
		if !strings.Contains(pkg, want) {
			t.Errorf("package.jadpo lacks %q", want)
		}
	}
	res := string(files["resources/emails.jadpo"])
	for _, want := range []string{"operation send {", "input: SendEmailInput", `method: "POST"`, `path: "/emails"`} {
		if !strings.Contains(res, want) {
			t.Errorf("resources/emails.jadpo lacks %q", want)
		}
	}
	// Sending twice may mail twice: never resent after a transport failure.
	if strings.Contains(res, "retry_safe: true") {
		t.Error("emails.send must not be retry_safe")
	}
	// The members Resend reads, no wire_name needed: each field is named as
	// Resend's member is.
	body := regexp.MustCompile(`(?s)value SendEmailInput \{(.*?)\n\}`).FindStringSubmatch(res)
	if body == nil {
		t.Fatal("no SendEmailInput")
	}
	fields := map[string]string{}
	for _, m := range regexp.MustCompile(`(?m)^\s+(\w+): (\S+)`).FindAllStringSubmatch(body[1], -1) {
		fields[m[1]] = m[2]
	}
	wantFields := map[string]string{"from": "Sender", "to": "Email", "subject": "Text", "text": "Text?", "html": "Text?", "reply_to": "Email?"}
	for k, v := range wantFields {
		if fields[k] != v {
			t.Errorf("SendEmailInput.%s is %q, want %q", k, fields[k], v)
		}
	}
	if len(fields) != len(wantFields) {
		t.Errorf("SendEmailInput has %v", fields)
	}
	if strings.Contains(body[1], "wire_name") {
		t.Error("Resend's members are its fields' names")
	}
	mapping := string(files["provides/email.jadpo"])
	for _, want := range []string{"call: emails.send", "from: settings.from", "to: message.to", "subject: message.subject",
		"text: message.text", "html: message.html"} {
		if !strings.Contains(mapping, want) {
			t.Errorf("the email mapping lacks %q", want)
		}
	}
}

// As TestDigestPinned: apps lock this version by its digest.
func TestResendDigestPinned(t *testing.T) {
	const want = "sha256:337684b0f437a639e2c90b0a84dea75be4ed059a8ecaf28d4ee213485b1e8cc2"
	if got := lockfile.Digest(catalog.Files(resendPackage)); got != want {
		t.Errorf("%s digest is %s, pinned %s", resendPackage, got, want)
	}
}
