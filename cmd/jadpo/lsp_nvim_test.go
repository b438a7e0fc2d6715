package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/jadpo/jadpo/cmd/internal/lsp/lsptest"
	"github.com/jadpo/jadpo/internal/jadpoproc"
)

// nvimVersion is the Neovim on PATH (or named by JADPO_NVIM) and its
// version; the test is skipped without one.
func nvimVersion(t *testing.T) (string, [3]int) {
	t.Helper()
	nvim := os.Getenv("JADPO_NVIM")
	if nvim == "" {
		p, err := exec.LookPath("nvim")
		if err != nil {
			t.Skip("Neovim (nvim) is not installed: the Neovim run is skipped (JADPO_NVIM names one elsewhere)")
		}
		nvim = p
	}
	out, err := exec.Command(nvim, "--version").Output()
	if err != nil {
		t.Fatalf("%s --version: %v", nvim, err)
	}
	m := regexp.MustCompile(`NVIM v(\d+)\.(\d+)\.(\d+)`).FindSubmatch(out)
	if m == nil {
		t.Fatalf("%s --version says no version: %s", nvim, out)
	}
	var v [3]int
	for i := range v {
		v[i], _ = strconv.Atoi(string(m[i+1]))
	}
	return nvim, v
}

// Issue 29: a real Neovim opens the warehouse with the built `jadpo lsp`
// and hovers (0.7 on: Debian 12's is 0.7.2), and, from 0.9 on (its
// semantic token highlighter), colours the file with the server's tokens.
func TestNeovimUsesTheLanguageServer(t *testing.T) {
	nvim, v := nvimVersion(t)
	if v[0] == 0 && v[1] < 7 {
		t.Skipf("Neovim %d.%d.%d is older than 0.7, whose client the run needs (the guide's setup needs 0.10)", v[0], v[1], v[2])
	}
	bin := jadpoproc.Binary(t)
	dir := t.TempDir()
	if err := copyProject(filepath.Join(repoRoot(t), "examples", "warehouse"), dir); err != nil {
		t.Fatal(err)
	}
	app := filepath.Join(dir, "app.jadpo")
	b, err := os.ReadFile(app)
	if err != nil {
		t.Fatal(err)
	}
	text := string(b)
	type pos struct {
		Name      string `json:"name"`
		Line      int    `json:"line"`
		Character int    `json:"character"`
	}
	place := func(name, needle string, delta int) pos {
		p := lsptest.At(text, needle, 0, delta)
		return pos{name, p["line"].(int), p["character"].(int)}
	}
	at, _ := json.Marshal([]pos{
		place("sqs_host", "config.sqs_host", 8),
		place("subscriber", "subscriber pack_order", 1),
		place("pack_order", "subscriber pack_order", 12),
		place("ShopConfig", "config ShopConfig", 8),
		place("10s", "10s", 0),
	})
	out := filepath.Join(t.TempDir(), "nvim.json")
	cmd := exec.Command(nvim, "--headless", "--clean", "-n", "-c", "luafile "+filepath.Join(repoRoot(t), "cmd", "jadpo", "testdata", "nvim_lsp.lua"))
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "JADPO_BIN="+bin, "JADPO_ROOT="+dir, "JADPO_FILE="+app, "JADPO_OUT="+out, "JADPO_AT="+string(at))
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("nvim: %v\n%s", err, b)
	}
	raw, err := os.ReadFile(out)
	if err != nil {
		t.Fatalf("Neovim wrote no result: %v", err)
	}
	var res struct {
		Version                string            `json:"version"`
		Error                  string            `json:"error"`
		Hover                  string            `json:"hover"`
		SemanticTokensProvider bool              `json:"semanticTokensProvider"`
		SemanticIntegers       int               `json:"semanticIntegers"`
		Legend                 []string          `json:"legend"`
		Tokens                 map[string]string `json:"tokens"`
	}
	if err := json.Unmarshal(raw, &res); err != nil {
		t.Fatalf("%v: %s", err, raw)
	}
	t.Logf("Neovim %s: %s", res.Version, raw)
	if res.Error != "" {
		t.Fatal(res.Error)
	}
	if !strings.Contains(res.Hover, "config field sqs_host: Url") || !strings.Contains(res.Hover, "SQS_HOST") {
		t.Errorf("hover in Neovim: %q", res.Hover)
	}
	if !res.SemanticTokensProvider || len(res.Legend) == 0 || res.Legend[0] != "namespace" {
		t.Errorf("Neovim did not see semanticTokensProvider and its legend: %v", res.Legend)
	}
	// Five integers a token: the warehouse's app.jadpo has some 170 words coloured.
	if res.SemanticIntegers < 5*150 || res.SemanticIntegers%5 != 0 {
		t.Errorf("Neovim's client got %d integers of semantic tokens", res.SemanticIntegers)
	}
	if v[0] == 0 && v[1] < 9 {
		t.Logf("Neovim %s has no semantic token highlighter (0.9): tokens not checked", res.Version)
		return
	}
	for name, want := range map[string]string{
		"sqs_host": "property.readonly", "subscriber": "keyword", "pack_order": "subscriber.declaration",
		"ShopConfig": "config.declaration.readonly", "10s": "number",
	} {
		if got := res.Tokens[name]; !strings.Contains(" "+got+" ", " "+want+" ") {
			t.Errorf("Neovim's semantic token at %s: %q, want %q", name, got, want)
		}
	}
}
