package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"github.com/jadpo/jadpo/check/ir"
	"github.com/jadpo/jadpo/cmd/internal/install"
	"github.com/jadpo/jadpo/providers/catalog"
)

// starterPackage is the queue package the starter app receives from; init installs it
// from the catalogue as `jadpo package add` does.
const starterPackage = "AmazonSqs.v2012_11_05"

// starterFiles is the starter app, path -> content. It must check clean and run under
// `jadpo dev` as written (init_test.go does both).
var starterFiles = map[string]string{
	"app.jadpo": `// A starter app: receives sign-ups from an SQS queue, keeps each once in the
// store, and runs the welcome subscriber for each.
use events/signups { UserSignedUp }

// Each setting comes from the environment (or .env.local) by its binding;
// .env.example lists them all.
config AppConfig {
    aws_access_key_id: Text { binding: "AWS_ACCESS_KEY_ID" }
    aws_secret_access_key: Text { binding: "AWS_SECRET_ACCESS_KEY" secret: true }
    sqs_host: Url { binding: "SQS_HOST" default: "https://sqs.eu-west-1.amazonaws.com" }
    signups_queue_url: Url { binding: "SIGNUPS_QUEUE_URL" }
}

// The events' store: build/local.sqlite by default, or DATABASE_URL.
store main {
}

connection signups {
    package: AmazonSqs.v2012_11_05
    host: config.sqs_host
    credential: {
        key_id: config.aws_access_key_id
        secret: config.aws_secret_access_key
    }
    settings: {
        queue_url: config.signups_queue_url
    }
}

queue signups {
    id_at: "id"
    events: { UserSignedUp }
}

subscriber welcome {
    on UserSignedUp(signup) {
    }
    retry: { max_attempts: 5 first_delay: 10s max_delay: 10m }
}
`,
	"events/signups.jadpo": `// The events the app receives.
public event UserSignedUp {
    user_id: Text { min_length: 1 max_length: 64 }
    email: Email
}
`,
	".env.example": `# The app's settings, one per binding. Copy this file to .env.local (kept out of
# git) and fill it in; the process environment wins over .env.local.
AWS_ACCESS_KEY_ID=
AWS_SECRET_ACCESS_KEY=
# SQS_HOST=https://sqs.eu-west-1.amazonaws.com
SIGNUPS_QUEUE_URL=
# The events' store; build/local.sqlite when unset. In production:
# DATABASE_URL=postgres://user:password@host:5432/app
`,
	".gitignore": `build/
.env.local
`,
}

func (e *env) initCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "init [dir]",
		Short: "Write a starter app into a new or empty folder",
		Long: "Init writes a starter app: one SQS queue (the " + starterPackage + " package from the\n" +
			"catalogue, installed and locked), the default store, an events module, one subscriber,\n" +
			".env.example with every setting's binding and a .gitignore. `jadpo check` passes on it and\n" +
			"`jadpo dev` runs it with a stand-in SQS. The folder must be new or empty. The app, its queue,\n" +
			"connection, events module, event and subscriber are named after the folder (lower_snake):\n" +
			"jadpo init payments writes queue payments, event PaymentsReceived, subscriber handle_payments;\n" +
			"jadpo init signups the sign-ups app (event UserSignedUp, subscriber welcome).",
		Example: "  jadpo init signups\n  cd signups && jadpo check && jadpo dev\n  jadpo init payments    # the payments app: queue payments, event PaymentsReceived",
		Args:    cobra.MaximumNArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			dir := "."
			if len(args) == 1 {
				dir = args[0]
			}
			return e.initApp(dir)
		},
	}
}

func (e *env) initApp(dir string) error {
	made := false
	entries, err := os.ReadDir(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return cmdError{code: "failed", exit: exitFound, msg: fmt.Sprintf("cannot make the folder %s: %v", folderName(dir), err)}
		}
		made = true
	case err != nil:
		if fi, serr := os.Stat(dir); serr == nil && !fi.IsDir() {
			return cmdError{code: "failed", exit: exitFound, msg: fmt.Sprintf("%s is a file, not a folder: give a new or empty folder, e.g. jadpo init my-app", folderName(dir))}
		}
		return cmdError{code: "failed", exit: exitFound, msg: fmt.Sprintf("cannot read the folder %s: %v", folderName(dir), err)}
	case len(entries) > 0:
		names := make([]string, 0, len(entries))
		for _, en := range entries {
			names = append(names, en.Name())
		}
		sort.Strings(names)
		shown := names
		if len(shown) > 3 {
			shown = append(shown[:3:3], "…")
		}
		return cmdError{code: "not_empty", exit: exitFound, msg: fmt.Sprintf(
			"%s is not empty (it has %s): jadpo init writes only into a new or empty folder and changed nothing; give a new folder, e.g. jadpo init my-app",
			folderName(dir), strings.Join(shown, ", "))}
	}
	// On a failure halfway, take back what was written: the folder was new or empty.
	undo := func() {
		if made {
			_ = os.RemoveAll(dir)
			return
		}
		if entries, err := os.ReadDir(dir); err == nil {
			for _, en := range entries {
				_ = os.RemoveAll(filepath.Join(dir, en.Name()))
			}
		}
	}
	name := appName(dir)
	files := namedStarter(name)
	paths := make([]string, 0, len(files))
	for p := range files {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	for _, p := range paths {
		full := filepath.Join(dir, filepath.FromSlash(p))
		err := os.MkdirAll(filepath.Dir(full), 0o755)
		if err == nil {
			err = os.WriteFile(full, []byte(files[p]), 0o644)
		}
		if err != nil {
			undo()
			return cmdError{code: "failed", exit: exitFound, msg: fmt.Sprintf("cannot write %s: %v", filepath.Join(shownPath(dir), p), err)}
		}
	}
	if _, err := install.Install(dir, starterPackage, catalog.Files(starterPackage)); err != nil {
		undo()
		return cmdError{code: "failed", exit: exitFound, msg: fmt.Sprintf("cannot install %s: %v", starterPackage, err)}
	}
	at := shownPath(dir)
	fmt.Fprintf(e.stdout, "wrote a starter app in %s: app.jadpo, events/%s.jadpo, .env.example, .gitignore, and %s installed in packages/ and jadpo.lock\n", at, name, starterPackage)
	fmt.Fprintf(e.stdout, "next: jadpo check %s, then jadpo dev %s and type: %s\n", at, at, starterSample(name))
	return nil
}

// appName is the starter app's name, from the folder it is written to: lower_snake, a
// letter first ("Payments-EU" -> payments_eu); "app" when nothing is left.
func appName(dir string) string {
	base := filepath.Base(dir)
	if abs, err := filepath.Abs(dir); err == nil {
		base = filepath.Base(abs)
	}
	var b strings.Builder
	for _, c := range strings.ToLower(base) {
		switch {
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9' && b.Len() > 0:
			b.WriteRune(c)
		case b.Len() > 0 && !strings.HasSuffix(b.String(), "_"):
			b.WriteByte('_')
		}
	}
	name := strings.Trim(b.String(), "_")
	if name == "" {
		return "app"
	}
	return name
}

// namedStarter is the starter app named after name: its queue, connection and config field,
// its events module, event and subscriber. "signups" is starterFiles as they are.
func namedStarter(name string) map[string]string {
	if name == "signups" {
		return starterFiles
	}
	camel := ir.UpperCamel(name)
	event := camel + "Received"
	upper := strings.ToUpper(name)
	app := strings.NewReplacer(
		"// A starter app: receives sign-ups from an SQS queue, keeps each once in the\n// store, and runs the welcome subscriber for each.",
		"// The "+name+" app: receives "+event+" events from an SQS queue, keeps each once\n// in the store, and runs the handle_"+name+" subscriber for each.",
		"use events/signups { UserSignedUp }", "use events/"+name+" { "+event+" }",
		"config AppConfig", "config "+camel+"Config",
		"signups_queue_url: Url { binding: \"SIGNUPS_QUEUE_URL\" }", name+"_queue_url: Url { binding: \""+upper+"_QUEUE_URL\" }",
		"connection signups {", "connection "+name+" {",
		"queue_url: config.signups_queue_url", "queue_url: config."+name+"_queue_url",
		"queue signups {", "queue "+name+" {",
		"events: { UserSignedUp }", "events: { "+event+" }",
		"subscriber welcome {", "subscriber handle_"+name+" {",
		"on UserSignedUp(signup) {", "on "+event+"(received) {",
	).Replace(starterFiles["app.jadpo"])
	out := map[string]string{
		"app.jadpo": app,
		"events/" + name + ".jadpo": "// The events the app receives.\npublic event " + event + " {\n" +
			"    reference: Text { min_length: 1 max_length: 64 }\n" +
			"    note: Text? { max_length: 500 }\n}\n",
		".env.example": strings.Replace(starterFiles[".env.example"], "SIGNUPS_QUEUE_URL=", upper+"_QUEUE_URL=", 1),
		".gitignore":   starterFiles[".gitignore"],
	}
	return out
}

// starterSample is a message the starter app named name keeps, as typed at jadpo dev.
func starterSample(name string) string {
	if name == "signups" {
		return `signups {"id":"s-1","user_id":"u-1","email":"ada@example.com"}`
	}
	return name + ` {"id":"m-1","reference":"r-1"}`
}
