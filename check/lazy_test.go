package check_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jadpo/jadpo/check"
	"github.com/jadpo/jadpo/lang/lockfile"
	"github.com/jadpo/jadpo/lang/project"
)

// writeBigPackage writes an app whose package has n resources, of which the
// receiving mapping calls one (resources/messages.jadpo).
func writeBigPackage(tb testing.TB, n int) string {
	dir := tb.TempDir()
	files := map[string]string{
		"app.jadpo": `config C {
    key: Text { binding: "KEY" }
    secret: Text { binding: "SECRET" secret: true }
    url: Url { binding: "QUEUE_URL" }
}
store s { }
public event Ping { id: Text }
connection q {
    package: Big.v1
    host: "http://127.0.0.1:9"
    credential: { key_id: config.key secret: config.secret }
    settings: { queue_url: config.url }
}
queue q {
    id_at: "id"
    events: { Ping }
}
`,
		"packages/Big.v1/package.jadpo": `package Big.v1
provider {
    protocol: Protocol.aws_json
    credential: CredentialScheme.aws_sigv4
    aws: { service: "sqs" target: "AmazonSQS" }
    error_code: "__type"
}
settings { queue_url: Url }
`,
		"packages/Big.v1/provides/receiving.jadpo": `provide receiving {
    receive: {
        call: messages.receive_message
        input: { queue_url: settings.queue_url }
        messages: response.messages
        body: item.body
        handle: item.receipt_handle
    }
    acknowledge: {
        call: messages.delete_message
        input: { queue_url: settings.queue_url receipt_handle: message.handle }
    }
}
`,
		"packages/Big.v1/resources/messages.jadpo": `resource messages {
    operation receive_message { input: ReceiveInput output: ReceiveOutput retry_safe: true }
    operation delete_message { input: DeleteInput }
}
value ReceiveInput { queue_url: Url }
value ReceiveOutput { messages: List<Message>? }
value Message { body: Text receipt_handle: Text }
value DeleteInput { queue_url: Url receipt_handle: Text }
`,
	}
	for i := 1; i < n; i++ {
		files[fmt.Sprintf("packages/Big.v1/resources/r%04d.jadpo", i)] = fmt.Sprintf(`resource r%04d {
    operation get_thing { input: Thing%04dInput output: Thing%04d }
    operation put_thing { input: Thing%04d }
}
value Thing%04dInput { id: Text { min_length: 1 max_length: 64 } }
value Thing%04d { id: Text name: Text? tags: List<Text>? count: Int { min: 0 } }
`, i, i, i, i, i, i)
	}
	pkgFiles := map[string][]byte{}
	for name, content := range files {
		if rel, ok := strings.CutPrefix(name, "packages/Big.v1/"); ok {
			pkgFiles[rel] = []byte(content)
		}
	}
	lock := &lockfile.Lock{}
	lock.SetFiles("Big.v1", lockfile.Digest(pkgFiles), lockfile.FileDigests(pkgFiles))
	lockText, err := lock.Bytes()
	if err != nil {
		tb.Fatal(err)
	}
	files["jadpo.lock"] = string(lockText)
	for name, content := range files {
		path := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			tb.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			tb.Fatal(err)
		}
	}
	return dir
}

// A package with 1,000 resources of which the mapping calls one: checking
// parses only the called resource's file.
func TestOnlyCalledResourcesAreParsed(t *testing.T) {
	dir := writeBigPackage(t, 1000)
	p := project.Load(dir)
	res := check.Check(p)
	if res.Diags.HasErrors() {
		t.Fatalf("the project does not check: %v", res.Diags)
	}
	var parsed []string
	for _, f := range p.Parsed {
		parsed = append(parsed, f.Source.Path)
	}
	want := []string{"app.jadpo", "packages/Big.v1/package.jadpo", "packages/Big.v1/provides/receiving.jadpo", "packages/Big.v1/resources/messages.jadpo"}
	if fmt.Sprint(parsed) != fmt.Sprint(want) {
		t.Fatalf("parsed %v, want exactly %v", parsed, want)
	}
	if got := p.Packages["Big.v1"].LoadedResources(); fmt.Sprint(got) != "[messages]" {
		t.Fatalf("loaded resources %v", got)
	}
}

// BenchmarkCheckPackageResources compares checking an app whose package has
// one resource with one whose package has 1,000 (the mapping calls one).
func BenchmarkCheckPackageResources(b *testing.B) {
	for _, n := range []int{1, 1000} {
		dir := writeBigPackage(b, n)
		b.Run(fmt.Sprintf("resources=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if res := check.Check(project.Load(dir)); res.Diags.HasErrors() {
					b.Fatal(res.Diags)
				}
			}
		})
	}
}
