package main

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strings"
	"testing"

	"github.com/jadpo/jadpo/docs/docstest"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// The CLI reference, docs/cli/, is written from the command tree itself: one
// page a command (jadpo_deliveries_retry.md), its usage, description,
// examples and flags, and an index. TestCLIReference fails when a page is
// stale; -update rewrites them all.

const cliRefDir = "docs/cli"

const cliRefRegenerate = "go test ./cmd/jadpo -run TestCLIReference -update"

// cliPages renders every visible command of the tree, keyed by file name.
func cliPages(root *cobra.Command) map[string]string {
	root.InitDefaultHelpCmd()
	pages := map[string]string{}
	var all []*cobra.Command
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		if c != root && (c.Hidden || !c.IsAvailableCommand()) {
			return
		}
		all = append(all, c)
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
	for _, c := range all {
		pages[cliPageName(c)] = cliPage(c)
	}
	pages["README.md"] = cliIndex(all)
	return pages
}

func cliPageName(c *cobra.Command) string {
	return strings.ReplaceAll(c.CommandPath(), " ", "_") + ".md"
}

func cliIndex(all []*cobra.Command) string {
	var b strings.Builder
	b.WriteString("# Command-line reference\n\n")
	b.WriteString("Every `jadpo` command, its arguments, flags and examples: what `jadpo <command> --help`\n")
	b.WriteString("prints, one page a command. These pages are written from the commands themselves\n")
	fmt.Fprintf(&b, "(`%s`); a test fails when one is stale.\n\n", cliRefRegenerate)
	b.WriteString("| command | what it does |\n|---|---|\n")
	for _, c := range all {
		fmt.Fprintf(&b, "| [`%s`](%s) | %s |\n", c.CommandPath(), cliPageName(c), mdCell(c.Short))
	}
	b.WriteString("\nExit status, for every command: 0 when it did what was asked (for `check`, no errors),\n")
	b.WriteString("1 when it found errors or failed, 2 when it was used wrongly; 130 or 143 when ended by\n")
	b.WriteString("SIGINT or SIGTERM. Their JSON output is described in [the JSON reference](../reference/json.md).\n")
	return b.String()
}

func cliPage(c *cobra.Command) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# %s\n\n", c.CommandPath())
	if c.Short != "" {
		fmt.Fprintf(&b, "%s.\n\n", strings.TrimSuffix(c.Short, "."))
	}
	if c.Runnable() {
		fmt.Fprintf(&b, "```text\n%s\n```\n\n", c.UseLine())
	}
	if c.Long != "" {
		fmt.Fprintf(&b, "%s\n\n", strings.TrimSpace(c.Long))
	}
	if len(c.Aliases) > 0 {
		fmt.Fprintf(&b, "Also spelt: %s.\n\n", "`"+strings.Join(c.Aliases, "`, `")+"`")
	}
	if c.Example != "" {
		fmt.Fprintf(&b, "## Examples\n\n```sh\n%s\n```\n\n", unindent(c.Example))
	}
	var subs []*cobra.Command
	for _, sub := range c.Commands() {
		if sub.IsAvailableCommand() {
			subs = append(subs, sub)
		}
	}
	if len(subs) > 0 {
		b.WriteString("## Commands\n\n| command | what it does |\n|---|---|\n")
		for _, sub := range subs {
			fmt.Fprintf(&b, "| [`%s`](%s) | %s |\n", sub.CommandPath(), cliPageName(sub), mdCell(sub.Short))
		}
		b.WriteString("\n")
	}
	flagTable(&b, "Flags", c.NonInheritedFlags())
	flagTable(&b, "Flags of every command", c.InheritedFlags())
	if c.HasParent() {
		p := c.Parent()
		fmt.Fprintf(&b, "See also: [`%s`](%s), [every command](README.md).\n", p.CommandPath(), cliPageName(p))
	} else {
		b.WriteString("See also: [every command](README.md).\n")
	}
	return b.String()
}

func flagTable(b *strings.Builder, title string, fs *pflag.FlagSet) {
	var rows []string
	fs.VisitAll(func(f *pflag.Flag) {
		if f.Hidden {
			return
		}
		name := "`--" + f.Name + "`"
		if f.Shorthand != "" {
			name = "`-" + f.Shorthand + "`, " + name
		}
		typ, usage := pflag.UnquoteUsage(f)
		def := ""
		if f.DefValue != "" && f.DefValue != "false" && f.DefValue != "[]" && f.DefValue != "0" && f.DefValue != "0s" {
			def = "`" + f.DefValue + "`"
		}
		rows = append(rows, fmt.Sprintf("| %s | %s | %s | %s |", name, typ, def, mdCell(usage)))
	})
	if len(rows) == 0 {
		return
	}
	sort.Strings(rows)
	fmt.Fprintf(b, "## %s\n\n| flag | value | default | what it does |\n|---|---|---|---|\n%s\n\n", title, strings.Join(rows, "\n"))
}

func mdCell(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "|", `\|`), "\n", " ")
}

func unindent(s string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimPrefix(l, "  ")
	}
	return strings.Join(lines, "\n")
}

func TestCLIReference(t *testing.T) {
	root := repoRoot(t)
	e := &env{ctx: context.Background(), stdin: strings.NewReader(""), stdout: io.Discard, stderr: io.Discard}
	pages := cliPages(e.rootCommand(nil))
	update := updateDocs != nil && updateDocs.Value.String() == "true"
	docstest.Folder{Dir: cliRefDir, Regenerate: cliRefRegenerate, Orphan: "documents no command"}.Check(t, root, pages, update)
	for _, must := range []string{"jadpo.md", "jadpo_check.md", "jadpo_deliveries_retry.md", "jadpo_store_stats.md"} {
		if _, ok := pages[must]; !ok {
			t.Errorf("the reference has no page %s: the walk of the command tree misses commands", must)
		}
	}
}
