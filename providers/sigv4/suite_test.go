package sigv4

import (
	"bytes"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/jadpo/jadpo/internal/reporoot"
	"github.com/jadpo/jadpo/internal/testclock"
)

// The published suite's fixed inputs.
const (
	suiteKeyID   = "AKIDEXAMPLE"
	suiteSecret  = "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY"
	suiteRegion  = "us-east-1"
	suiteService = "service"
	suiteTime    = "20150830T123600Z"
	// suiteCases is how many cases (folders holding a .req) this version of
	// the suite has, nested ones (normalize-path/, post-sts-token/) included.
	suiteCases = 31
)

func suiteSigner(t testing.TB) *Signer {
	t.Helper()
	s, err := NewSigner(NewCredentials(suiteKeyID, suiteSecret, ""), suiteService, suiteRegion)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func suiteT(t testing.TB) time.Time {
	tm, err := time.Parse(TimeFormat, suiteTime)
	if err != nil {
		t.Fatal(err)
	}
	return tm
}

// suiteDir finds ../shared/testdata/aws-sig-v4-test-suite from the module
// root (the folder holding go.mod), or skips.
func suiteDir(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	dir, err = reporoot.Find(dir)
	if err != nil {
		t.Skipf("%v; cannot locate ../shared/testdata/aws-sig-v4-test-suite", err)
	}
	suite := filepath.Join(dir, "..", "shared", "testdata", "aws-sig-v4-test-suite")
	if st, err := os.Stat(suite); err != nil || !st.IsDir() {
		t.Skipf("AWS SigV4 test suite not found at %s (it lives in shared/, beside the project); the pinned literal cases still run", suite)
	}
	return suite
}

// parseSuiteRequest reads a suite .req file: the request line (the path may
// hold spaces and raw UTF-8), header lines (a line starting with white space
// continues the previous header as another value), a blank line, the body.
func parseSuiteRequest(t *testing.T, data []byte) *Request {
	t.Helper()
	text := strings.ReplaceAll(string(data), "\r\n", "\n")
	head, body, _ := strings.Cut(text, "\n\n")
	lines := strings.Split(head, "\n")
	first := lines[0]
	sp1 := strings.IndexByte(first, ' ')
	sp2 := strings.LastIndexByte(first, ' ')
	if sp1 < 0 || sp2 <= sp1 {
		t.Fatalf("bad request line %q", first)
	}
	target := first[sp1+1 : sp2]
	path, query, _ := strings.Cut(target, "?")
	r := &Request{Method: first[:sp1], Path: path, RawQuery: query, Header: http.Header{}}
	last := ""
	for _, line := range lines[1:] {
		if line == "" {
			continue
		}
		if line[0] == ' ' || line[0] == '\t' {
			if last == "" {
				t.Fatalf("continuation without a header: %q", line)
			}
			r.Header[last] = append(r.Header[last], strings.TrimSpace(line))
			continue
		}
		name, value, ok := strings.Cut(line, ":")
		if !ok {
			t.Fatalf("bad header line %q", line)
		}
		if strings.EqualFold(name, "host") {
			r.Host = value
			last = ""
			continue
		}
		key := http.CanonicalHeaderKey(name)
		r.Header[key] = append(r.Header[key], value)
		last = key
	}
	r.PayloadHash = PayloadHash([]byte(body))
	return r
}

func TestAWSSuite(t *testing.T) {
	root := suiteDir(t)
	var cases []string
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && strings.HasSuffix(p, ".req") {
			cases = append(cases, p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(cases)
	s := suiteSigner(t)
	tm := suiteT(t)
	passed := 0
	for _, reqPath := range cases {
		base := strings.TrimSuffix(reqPath, ".req")
		name, _ := filepath.Rel(root, filepath.Dir(reqPath))
		ok := t.Run(filepath.ToSlash(name), func(t *testing.T) {
			read := func(ext string) string {
				b, err := os.ReadFile(base + ext)
				if err != nil {
					t.Fatal(err)
				}
				return strings.ReplaceAll(string(b), "\r\n", "\n")
			}
			r := parseSuiteRequest(t, []byte(read(".req")))
			res := s.Explain(r, tm)
			if want := read(".creq"); res.CanonicalRequest != want {
				t.Errorf("canonical request\n got: %q\nwant: %q", res.CanonicalRequest, want)
			}
			if want := read(".sts"); res.StringToSign != want {
				t.Errorf("string to sign\n got: %q\nwant: %q", res.StringToSign, want)
			}
			if want := strings.TrimSpace(read(".authz")); res.Authorization != want {
				t.Errorf("authorization\n got: %s\nwant: %s", res.Authorization, want)
			}
			// The signed request (.sreq) carries the same Authorization.
			sreq := read(".sreq")
			if !strings.Contains(sreq, "Authorization: "+res.Authorization) {
				t.Errorf(".sreq does not carry our Authorization")
			}
		})
		if ok {
			passed++
		}
	}
	t.Logf("AWS SigV4 suite: %d of %d cases passed", passed, len(cases))
	if len(cases) != suiteCases {
		t.Errorf("found %d cases, want %d: the suite changed, or a nested folder was missed", len(cases), suiteCases)
	}
	if passed != len(cases) {
		t.Errorf("%d of %d cases passed", passed, len(cases))
	}
}

// The suite's results pinned as literals, so they stand without shared/.
func TestPinnedSuiteCases(t *testing.T) {
	s := suiteSigner(t)
	tm := suiteT(t)
	cases := []struct {
		name, method string
		wantSTS      string
		wantAuthz    string
	}{
		{
			name: "get-vanilla", method: "GET",
			wantSTS: "AWS4-HMAC-SHA256\n20150830T123600Z\n20150830/us-east-1/service/aws4_request\n" +
				"bb579772317eb040ac9ed261061d46c1f17a8133879d6129b6e1c25292927e63",
			wantAuthz: "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request, " +
				"SignedHeaders=host;x-amz-date, Signature=5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31",
		},
		{
			name: "post-vanilla", method: "POST",
			wantSTS: "AWS4-HMAC-SHA256\n20150830T123600Z\n20150830/us-east-1/service/aws4_request\n" +
				"553f88c9e4d10fc9e109e2aeb65f030801b70c2f6468faca261d401ae622fc87",
			wantAuthz: "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request, " +
				"SignedHeaders=host;x-amz-date, Signature=5da7c1a2acd57cee7505fc6676e4e544621c30862966e37dddb68e92efbe5d6b",
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := &Request{
				Method: c.method, Path: "/", Host: "example.amazonaws.com",
				Header: http.Header{"X-Amz-Date": {suiteTime}},
			}
			res := s.Explain(r, tm)
			wantCreq := c.method + "\n/\n\nhost:example.amazonaws.com\nx-amz-date:20150830T123600Z\n\nhost;x-amz-date\n" + EmptyPayloadHash
			if res.CanonicalRequest != wantCreq {
				t.Errorf("canonical request\n got: %q\nwant: %q", res.CanonicalRequest, wantCreq)
			}
			if res.StringToSign != c.wantSTS {
				t.Errorf("string to sign\n got: %q\nwant: %q", res.StringToSign, c.wantSTS)
			}
			if res.Authorization != c.wantAuthz {
				t.Errorf("authorization\n got: %s\nwant: %s", res.Authorization, c.wantAuthz)
			}
			// The same through the http.Request path, which adds X-Amz-Date itself.
			req, _ := http.NewRequest(c.method, "https://example.amazonaws.com/", nil)
			if err := s.Sign(req, nil, tm); err != nil {
				t.Fatal(err)
			}
			if got := req.Header.Get("Authorization"); got != c.wantAuthz {
				t.Errorf("Sign: authorization\n got: %s\nwant: %s", got, c.wantAuthz)
			}
			if got := req.Header.Get("X-Amz-Date"); got != suiteTime {
				t.Errorf("X-Amz-Date = %q", got)
			}
		})
	}
}

// post-sts-header-before pinned: a session token is signed as
// X-Amz-Security-Token.
func TestPinnedSessionToken(t *testing.T) {
	const token = "AQoDYXdzEPT//////////wEXAMPLEtc764bNrC9SAPBSM22wDOk4x4HIZ8j4FZTwdQWLWsKWHGBuFqwAeMicRXmxfpSPfIeoIYRqTflfKD8YUuwthAx7mSEI/qkPpKPi/kMcGdQrmGdeehM4IC1NtBmUpp2wUE8phUZampKsburEDy0KPkyQDYwT7WZ0wq5VSXDvp75YU9HFvlRd8Tx6q6fE8YQcHNVXAkiY9q6d+xo0rKwT38xVqr7ZD0u0iPPkUL64lIZbqBAz+scqKmlzm8FDrypNC9Yjc8fPOLn9FX9KSYvKTr4rvx3iSIlTJabIQwj2ICCR/oLxBA=="
	s, err := NewSigner(NewCredentials(suiteKeyID, suiteSecret, token), suiteService, suiteRegion)
	if err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequest("POST", "https://example.amazonaws.com/", nil)
	if err := s.Sign(req, nil, suiteT(t)); err != nil {
		t.Fatal(err)
	}
	want := "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request, " +
		"SignedHeaders=host;x-amz-date;x-amz-security-token, Signature=85d96828115b5dc0cfc3bd16ad9e210dd772bbebba041836c64533a82be05ead"
	if got := req.Header.Get("Authorization"); got != want {
		t.Errorf("authorization\n got: %s\nwant: %s", got, want)
	}
	if got := req.Header.Get("X-Amz-Security-Token"); got != token {
		t.Errorf("X-Amz-Security-Token not set")
	}
}

// AWS's worked example (IAM ListUsers), pinned.
func TestWorkedExampleIAMListUsers(t *testing.T) {
	s, err := NewSigner(NewCredentials(suiteKeyID, suiteSecret, ""), "iam", "us-east-1")
	if err != nil {
		t.Fatal(err)
	}
	tm := time.Date(2015, 8, 30, 12, 36, 0, 0, time.UTC)
	r := &Request{
		Method:   "GET",
		Path:     "/",
		RawQuery: "Action=ListUsers&Version=2010-05-08",
		Host:     "iam.amazonaws.com",
		Header: http.Header{
			"Content-Type": {"application/x-www-form-urlencoded; charset=utf-8"},
			"X-Amz-Date":   {"20150830T123600Z"},
		},
	}
	res := s.Explain(r, tm)
	wantCreq := "GET\n/\nAction=ListUsers&Version=2010-05-08\n" +
		"content-type:application/x-www-form-urlencoded; charset=utf-8\nhost:iam.amazonaws.com\nx-amz-date:20150830T123600Z\n\n" +
		"content-type;host;x-amz-date\n" + EmptyPayloadHash
	if res.CanonicalRequest != wantCreq {
		t.Errorf("canonical request\n got: %q\nwant: %q", res.CanonicalRequest, wantCreq)
	}
	if got := PayloadHash([]byte(res.CanonicalRequest)); got != "f536975d06c0309214f805bb90ccff089219ecd68b2577efef23edd43b7e1a59" {
		t.Errorf("canonical request hash = %s", got)
	}
	if res.Signature != "5d672d79c15b13162d9279b0855cfba6789a8edb4c82c400e06b5924a6f2b5d7" {
		t.Errorf("signature = %s", res.Signature)
	}
	// Through an http.Request: region from the host (iam.amazonaws.com is
	// not <service>.<region>.amazonaws.com, so us-east-1).
	req, _ := http.NewRequest("GET", "https://iam.amazonaws.com/?Action=ListUsers&Version=2010-05-08", nil)
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded; charset=utf-8")
	req.Header.Set("User-Agent", "not signed")
	s2, _ := NewSigner(NewCredentials(suiteKeyID, suiteSecret, ""), "iam", RegionForHost("https://iam.amazonaws.com"))
	if err := s2.Sign(req, nil, tm); err != nil {
		t.Fatal(err)
	}
	if got := req.Header.Get("Authorization"); !strings.HasSuffix(got, "Signature=5d672d79c15b13162d9279b0855cfba6789a8edb4c82c400e06b5924a6f2b5d7") {
		t.Errorf("authorization = %s", got)
	}
}

func TestRegionForHost(t *testing.T) {
	cases := map[string]string{
		"sqs.eu-west-1.amazonaws.com":                  "eu-west-1",
		"https://sqs.eu-west-1.amazonaws.com":          "eu-west-1",
		"https://SQS.AP-SOUTHEAST-2.amazonaws.com:443": "ap-southeast-2",
		"https://sqs.us-west-2.amazonaws.com/":         "us-west-2",
		"queue.amazonaws.com":                          "us-east-1",
		"iam.amazonaws.com":                            "us-east-1",
		"http://127.0.0.1:4566":                        "us-east-1",
		"localhost:9324":                               "us-east-1",
		"sqs.eu-west-1.amazonaws.com.evil.example":     "us-east-1",
		"a.b.sqs.eu-west-1.amazonaws.com":              "us-east-1",
		"":                                             "us-east-1",
		// SQS's legacy endpoint names the region first.
		"https://eu-west-1.queue.amazonaws.com":  "eu-west-1",
		"us-gov-west-1.queue.amazonaws.com":      "us-gov-west-1",
		"https://queue.amazonaws.com/123/orders": "us-east-1",
		// A VPC endpoint: the label before vpce.
		"vpce-0123.sqs.eu-west-1.vpce.amazonaws.com":                           "eu-west-1",
		"https://vpce-0a1b2c3d-4e5f6a7b.sqs.ap-southeast-3.vpce.amazonaws.com": "ap-southeast-3",
		"vpce-0123-eu-west-1a.sqs.eu-west-1.vpce.amazonaws.com":                "eu-west-1",
		"sqs.vpce.amazonaws.com":                                               "us-east-1",
		// China.
		"sqs.cn-north-1.amazonaws.com.cn":             "cn-north-1",
		"https://sqs.cn-northwest-1.amazonaws.com.cn": "cn-northwest-1",
		// Other partitions and newer regions.
		"sqs.us-gov-west-1.amazonaws.com":  "us-gov-west-1",
		"sqs-fips.us-east-2.amazonaws.com": "us-east-2",
		"sqs.il-central-1.amazonaws.com":   "il-central-1",
		"sqs.us-isob-east-1.amazonaws.com": "us-isob-east-1",
		// A label in a region's place that is no region.
		"sqs.queue.amazonaws.com":       "us-east-1",
		"sqs.s3.amazonaws.com":          "us-east-1",
		"sqs.eu-west.amazonaws.com":     "us-east-1",
		"queue.queue.amazonaws.com":     "us-east-1",
		"sqs.eu-west-1.amazonaws.co":    "us-east-1",
		".eu-west-1.amazonaws.com":      "us-east-1",
		"sqs.eu-west-1.amazonaws.cn":    "us-east-1",
		"eu-west-1.amazonaws.com":       "us-east-1",
		"sqs.eu-west-100.amazonaws.com": "us-east-1",
	}
	for host, want := range cases {
		if got := RegionForHost(host); got != want {
			t.Errorf("RegionForHost(%q) = %q, want %q", host, got, want)
		}
	}
}

func TestNormalizePath(t *testing.T) {
	cases := map[string]string{
		"/":                        "/",
		"//":                       "/",
		"/./":                      "/",
		"/a/..":                    "/",
		"/a/b/../..":               "/",
		"/a/./b":                   "/a/b",
		"//a//":                    "/a/",
		"/a/.":                     "/a/",
		"/a/b/..":                  "/a/",
		"/../a":                    "/a",
		"a/b":                      "/a/b",
		"/a%20b/":                  "/a%2520b/",
		"/-._~0123456789ABCXYZabc": "/-._~0123456789ABCXYZabc",
	}
	for in, want := range cases {
		got := string(appendCanonicalURI(nil, in))
		if got != want {
			t.Errorf("canonical URI of %q = %q, want %q", in, got, want)
		}
	}
}

// The secret appears in no header and in no formatting of the credentials or
// the signer.
func TestSecretNeverShown(t *testing.T) {
	const secret = "TOP-SECRET-KEY-do-not-print"
	const token = "SESSION-TOKEN-do-not-print"
	creds := NewCredentials("AKIDSHOWN", secret, token)
	s, err := NewSigner(creds, "sqs", "eu-west-1")
	if err != nil {
		t.Fatal(err)
	}
	type holder struct {
		c Credentials
		s *Signer
	}
	h := holder{creds, s}
	var out bytes.Buffer
	for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%q", "%x", "%X", "%d"} {
		for _, v := range []any{creds, &creds, s, h, &h, []Credentials{creds}, map[string]Credentials{"x": creds}} {
			out.WriteString(fmt.Sprintf(verb, v))
			out.WriteByte('\n')
		}
	}
	b, _ := creds.MarshalText()
	out.Write(b)
	out.WriteString(creds.LogValue().String())
	if strings.Contains(out.String(), secret) || strings.Contains(out.String(), token) {
		t.Fatalf("secret shown:\n%s", out.String())
	}
	if strings.Contains(out.String(), strings.ToUpper(hexOf(secret))) || strings.Contains(out.String(), hexOf(secret)) {
		t.Fatalf("secret shown in hex")
	}
	if !strings.Contains(out.String(), "AKIDSHOWN") {
		t.Fatalf("key id should be shown: %s", out.String())
	}

	req, _ := http.NewRequest("POST", "https://sqs.eu-west-1.amazonaws.com/", strings.NewReader("{}"))
	if err := s.Sign(req, []byte("{}"), testclock.Epoch()); err != nil {
		t.Fatal(err)
	}
	var hdr bytes.Buffer
	req.Header.Write(&hdr)
	if strings.Contains(hdr.String(), secret) {
		t.Fatal("secret in a header")
	}
	// The session token is sent (that is its purpose), the secret never.
	if !strings.Contains(hdr.String(), token) {
		t.Fatal("session token not sent")
	}
}

func hexOf(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		b.WriteByte(lowerHex[s[i]>>4])
		b.WriteByte(lowerHex[s[i]&0xf])
	}
	return b.String()
}

func TestVerifier(t *testing.T) {
	creds := NewCredentials("AKIDFAKE", "fake-secret", "")
	s, _ := NewSigner(creds, "sqs", "us-east-1")
	v := &Verifier{
		Lookup: func(id string) (Credentials, bool) {
			if id == "AKIDFAKE" {
				return creds, true
			}
			return Credentials{}, false
		},
		Service: "sqs",
	}
	now := testclock.Epoch()
	body := []byte(`{"QueueUrl":"x"}`)
	newReq := func() *http.Request {
		req, _ := http.NewRequest("POST", "http://127.0.0.1:9324/", bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/x-amz-json-1.0")
		req.Header.Set("X-Amz-Target", "AmazonSQS.ReceiveMessage")
		return req
	}
	reason := func(err error) Reason {
		if err == nil {
			return 0
		}
		ve, ok := err.(*VerifyError)
		if !ok {
			t.Fatalf("not a VerifyError: %v", err)
		}
		return ve.Reason
	}

	req := newReq()
	s.Sign(req, body, now)
	if err := v.Verify(req, body, now.Add(time.Minute)); err != nil {
		t.Fatalf("good signature refused: %v", err)
	}
	// A signed header changed.
	req.Header.Set("X-Amz-Target", "AmazonSQS.DeleteMessage")
	if r := reason(v.Verify(req, body, now)); r != Mismatch {
		t.Errorf("changed header: reason %v", r)
	}
	// The body changed.
	req = newReq()
	s.Sign(req, body, now)
	if r := reason(v.Verify(req, []byte(`{"QueueUrl":"y"}`), now)); r != Mismatch {
		t.Errorf("changed body: reason %v", r)
	}
	// An unsigned header may change.
	req.Header.Set("User-Agent", "other")
	if err := v.Verify(req, body, now); err != nil {
		t.Errorf("unsigned header changed: %v", err)
	}
	// Stale and future dates.
	if r := reason(v.Verify(req, body, now.Add(16*time.Minute))); r != Expired {
		t.Errorf("stale: reason %v", r)
	}
	if r := reason(v.Verify(req, body, now.Add(-16*time.Minute))); r != Expired {
		t.Errorf("future: reason %v", r)
	}
	// Wrong secret.
	bad, _ := NewSigner(NewCredentials("AKIDFAKE", "wrong", ""), "sqs", "us-east-1")
	req = newReq()
	bad.Sign(req, body, now)
	if r := reason(v.Verify(req, body, now)); r != Mismatch {
		t.Errorf("wrong secret: reason %v", r)
	}
	// Unknown key.
	other, _ := NewSigner(NewCredentials("AKIDOTHER", "fake-secret", ""), "sqs", "us-east-1")
	req = newReq()
	other.Sign(req, body, now)
	if r := reason(v.Verify(req, body, now)); r != UnknownKey {
		t.Errorf("unknown key: reason %v", r)
	}
	// Missing and malformed.
	req = newReq()
	if r := reason(v.Verify(req, body, now)); r != Missing {
		t.Errorf("missing: reason %v", r)
	}
	for _, h := range []string{
		"AWS4-HMAC-SHA256 Credential=AKIDFAKE/20240501/us-east-1/sqs/aws4_request, Signature=abc",
		"AWS4-HMAC-SHA256 Credential=AKIDFAKE/20240501/us-east-1/sqs, SignedHeaders=host, Signature=abc",
		"AWS4-HMAC-SHA256 Credential=AKIDFAKE/20240501/us-east-1/sqs/aws4_request, SignedHeaders=x-amz-date, Signature=abc",
		"AWS4-HMAC-SHA1 Credential=AKIDFAKE/20240501/us-east-1/sqs/aws4_request, SignedHeaders=host, Signature=abc",
		"Bearer token",
	} {
		req = newReq()
		req.Header.Set("X-Amz-Date", "20240501T100000Z")
		req.Header.Set("Authorization", h)
		if r := reason(v.Verify(req, body, now)); r != Incomplete {
			t.Errorf("%q: reason %v", h, r)
		}
	}
	// Scoped to another service.
	sns, _ := NewSigner(creds, "sns", "us-east-1")
	req = newReq()
	sns.Sign(req, body, now)
	if r := reason(v.Verify(req, body, now)); r != Mismatch {
		t.Errorf("other service: reason %v", r)
	}
	// A mismatch explains itself without the secret.
	req = newReq()
	bad.Sign(req, body, now)
	err := v.Verify(req, body, now)
	if err == nil || strings.Contains(err.Error(), "fake-secret") || !strings.Contains(err.Error(), "Canonical String") {
		t.Errorf("mismatch message: %v", err)
	}
}
