package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/jadpo/jadpo/cmd/internal/jsonout"
)

// writeErrorEnvelope prints a failure as JSON: kind "error" and its code and message.
func writeErrorEnvelope(w io.Writer, command, code, msg string) {
	_ = jsonout.Write(w, jsonout.NewError(command, code, msg))
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
