package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"
)

// jsonSchemaVersion is the version of every JSON output but check's and build's report
// (diag.Report, its own schemaVersion 1): docs/reference/json.md. Adding a field is compatible and
// keeps it; removing or changing one is a new major version.
const jsonSchemaVersion = 1

// envelope is what every JSON output starts with (docs/reference/json.md); the command's own fields
// follow it in the same object.
type envelope struct {
	SchemaVersion int    `json:"schemaVersion"`
	Kind          string `json:"kind"`
	Command       string `json:"command"`
	Status        string `json:"status"` // ok or failed
}

// jsonError is an envelope's error, on every failing path of a command given --format json.
type jsonError struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// writeEnvelope prints one JSON document: the envelope, then payload's fields (a struct or
// a map), in that order.
func writeEnvelope(w io.Writer, kind, command, status string, payload any) error {
	head, err := json.Marshal(envelope{SchemaVersion: jsonSchemaVersion, Kind: kind, Command: command, Status: status})
	if err != nil {
		return err
	}
	var body bytes.Buffer
	enc := json.NewEncoder(&body)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(payload); err != nil {
		return err
	}
	rest := bytes.TrimSpace(body.Bytes())
	if len(rest) < 2 || rest[0] != '{' {
		return fmt.Errorf("a JSON payload must be an object, not %s", rest)
	}
	doc := append([]byte{}, head[:len(head)-1]...) // without its closing brace
	if bytes.Equal(rest, []byte("{}")) {
		doc = append(doc, '}')
	} else {
		doc = append(append(doc, ','), rest[1:]...)
	}
	var out bytes.Buffer
	if err := json.Indent(&out, doc, "", "  "); err != nil {
		return err
	}
	out.WriteByte('\n')
	_, err = w.Write(out.Bytes())
	return err
}

// writeErrorEnvelope prints a failure as JSON: kind "error" and its code and message.
func writeErrorEnvelope(w io.Writer, command, code, msg string) {
	_ = writeEnvelope(w, "error", command, "failed", struct {
		Error jsonError `json:"error"`
	}{jsonError{Code: code, Message: msg}})
}

// commandName is c's path without "jadpo ": "deliveries show".
func commandName(c *cobra.Command) string {
	return strings.TrimPrefix(strings.TrimPrefix(c.CommandPath(), "jadpo"), " ")
}

// addFormatFlag gives c --format text|json and, where the command documents it, --json as its
// alias.
func addFormatFlag(c *cobra.Command, format *string, withJSONAlias, persistent bool) {
	fs := c.Flags()
	if persistent {
		fs = c.PersistentFlags()
	}
	fs.StringVar(format, "format", "text", "output format: text or json")
	_ = c.RegisterFlagCompletionFunc("format", cobra.FixedCompletions([]string{"text", "json"}, cobra.ShellCompDirectiveNoFileComp))
	if withJSONAlias {
		fs.Var(jsonAlias{format}, "json", "the same as --format json")
		fs.Lookup("json").NoOptDefVal = "true"
	}
}

// jsonAlias is --json: setting it sets --format json.
type jsonAlias struct{ format *string }

func (a jsonAlias) String() string {
	if a.format != nil && *a.format == "json" {
		return "true"
	}
	return "false"
}

func (a jsonAlias) Set(v string) error {
	switch v {
	case "true", "1":
		*a.format = "json"
	case "false", "0":
	default:
		return fmt.Errorf("--json takes no value")
	}
	return nil
}

func (jsonAlias) Type() string { return "bool" }

// checkFormat refuses a --format other than text or json.
func checkFormat(format string) error {
	if format != "text" && format != "json" {
		return usageError{fmt.Errorf("--format must be text or json, not %q", format)}
	}
	return nil
}
