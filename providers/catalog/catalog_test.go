package catalog_test

import (
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/jadpo/jadpo/check/ir"
	"github.com/jadpo/jadpo/lang/lockfile"
	"github.com/jadpo/jadpo/providers/catalog"
)

const sqsPackage = "AmazonSqs.v2012_11_05"

func TestNamesAndFiles(t *testing.T) {
	if !slices.Contains(catalog.Names(), sqsPackage) || !catalog.Has(sqsPackage) {
		t.Fatalf("names %v", catalog.Names())
	}
	files := catalog.Files(sqsPackage)
	var paths []string
	for p := range files {
		paths = append(paths, p)
	}
	slices.Sort(paths)
	want := []string{"package.jadpo", "provides/receiving.jadpo", "resources/messages.jadpo"}
	if !slices.Equal(paths, want) {
		t.Fatalf("files %v", paths)
	}
	name, err := lockfile.HeaderName(files["package.jadpo"])
	if err != nil || name != sqsPackage {
		t.Errorf("header %q %v", name, err)
	}
	for _, bad := range []string{"", "Nope.v1", "../catalog", "AmazonSqs.v2012_11_05/resources"} {
		if catalog.Files(bad) != nil || catalog.Has(bad) {
			t.Errorf("%q found", bad)
		}
	}
	// The caller owns the copy.
	files["package.jadpo"][0] = 'X'
	if catalog.Files(sqsPackage)["package.jadpo"][0] == 'X' {
		t.Error("Files shares its bytes")
	}
}

// The package's value types name real SQS JSON members: each field's member
// (UpperCamelCase of its name, or its wire_name) is a member of the matching
// aws-sdk-go-v2 type.
func TestMembersAreSQSMembers(t *testing.T) {
	files := catalog.Files(sqsPackage)
	src := string(files["resources/messages.jadpo"])
	sdk := map[string]reflect.Type{
		"ReceiveMessageInput":            reflect.TypeOf(sqs.ReceiveMessageInput{}),
		"ReceiveMessageOutput":           reflect.TypeOf(sqs.ReceiveMessageOutput{}),
		"Message":                        reflect.TypeOf(types.Message{}),
		"MessageAttributeValue":          reflect.TypeOf(types.MessageAttributeValue{}),
		"DeleteMessageInput":             reflect.TypeOf(sqs.DeleteMessageInput{}),
		"DeleteMessageBatchInput":        reflect.TypeOf(sqs.DeleteMessageBatchInput{}),
		"DeleteMessageBatchRequestEntry": reflect.TypeOf(types.DeleteMessageBatchRequestEntry{}),
		"DeleteMessageBatchOutput":       reflect.TypeOf(sqs.DeleteMessageBatchOutput{}),
		"DeleteMessageBatchResultEntry":  reflect.TypeOf(types.DeleteMessageBatchResultEntry{}),
		"BatchResultErrorEntry":          reflect.TypeOf(types.BatchResultErrorEntry{}),
	}
	valueRE := regexp.MustCompile(`(?s)value (\w+) \{(.*?)\n\}`)
	fieldRE := regexp.MustCompile(`(?m)^\s+(\w+): ([^{\n]+?)\s*(?:\{([^}]*)\})?\s*$`)
	wireRE := regexp.MustCompile(`wire_name: "(\w+)"`)
	seen := 0
	for _, v := range valueRE.FindAllStringSubmatch(src, -1) {
		typ, ok := sdk[v[1]]
		if !ok {
			t.Errorf("value %s has no SDK counterpart in this test", v[1])
			continue
		}
		seen++
		fields := fieldRE.FindAllStringSubmatch(v[2], -1)
		if len(fields) == 0 {
			t.Errorf("value %s: no fields read", v[1])
		}
		for _, f := range fields {
			member := ir.UpperCamel(f[1])
			if m := wireRE.FindStringSubmatch(f[3]); m != nil {
				member = m[1]
			}
			if _, ok := typ.FieldByName(member); !ok {
				t.Errorf("%s.%s: %s is not a member of %s", v[1], f[1], member, typ)
			}
			// SQS leaves optional members out; the package's optional fields
			// are those the SDK may leave nil. A required field must be one
			// SQS always sends or always needs.
			optional := strings.HasSuffix(strings.TrimSpace(f[2]), "?")
			if !optional && v[1] == "ReceiveMessageOutput" {
				t.Errorf("%s.%s must be optional: SQS leaves it out of an empty receive", v[1], f[1])
			}
		}
	}
	if seen != len(sdk) {
		t.Errorf("read %d value types, want %d", seen, len(sdk))
	}
}

func TestMappingShape(t *testing.T) {
	src := string(catalog.Files(sqsPackage)["provides/receiving.jadpo"])
	for _, want := range []string{"call: messages.receive_message", "call: messages.delete_message",
		"messages: response.messages", "body: item.body", "handle: item.receipt_handle", "receipt_handle: message.handle",
		"call: messages.delete_message_batch", "entries: input.entries", "id: message.entry_id",
		"failed: response.failed", "failed_id: item.id"} {
		if !strings.Contains(src, want) {
			t.Errorf("mapping lacks %q", want)
		}
	}
	pkg := string(catalog.Files(sqsPackage)["package.jadpo"])
	for _, want := range []string{"protocol: Protocol.aws_json", "credential: CredentialScheme.aws_sigv4",
		`aws: { service: "sqs" target: "AmazonSQS" }`, `error_code: "__type"`, "queue_url: Url",
		"wait_time_seconds: WaitTimeSeconds { default: 0 }", "visibility_timeout: VisibilityTimeout?",
		"type WaitTimeSeconds = Int { min: 0 max: 20 }"} {
		if !strings.Contains(pkg, want) {
			t.Errorf("package.jadpo lacks %q", want)
		}
	}
}

// A published package version is installed into apps' jadpo.lock by its
// digest: changing its files makes every such app's check fail until it runs
// `jadpo package add` again. Update this pin only knowingly.
func TestDigestPinned(t *testing.T) {
	// eb288ded… was the copy before DeleteMessageBatch (issue 16), 8e34960c…
	// the one before its answer's Successful was read (issue 24).
	const want = "sha256:2eaeba8a637aa8e4612c4cb347ad955eaadcced0773aedd41c90933ec8413757"
	if got := lockfile.Digest(catalog.Files(sqsPackage)); got != want {
		t.Errorf("%s digest is %s, pinned %s", sqsPackage, got, want)
	}
}

// Every catalogue package's current copy is in published.txt, and every
// name there is the catalogue's: a change to a package's files must add its
// new digest (and keep the old ones), or projects that installed it would
// be told their package is not the catalogue's.
func TestPublishedListsEveryPackage(t *testing.T) {
	for _, name := range catalog.Names() {
		if d := lockfile.Digest(catalog.Files(name)); !slices.Contains(catalog.Published(name), d) {
			t.Errorf("%s's files (%s) are not in published.txt: add the line `%s %s`", name, d, name, d)
		}
	}
	if catalog.Published("Nope.v1") != nil {
		t.Error("a name the catalogue does not hold has published copies")
	}
	if got := len(catalog.Published("SqlInbox.v1")); got < 2 {
		t.Errorf("SqlInbox.v1's earlier copy is not listed (%d)", got)
	}
}
