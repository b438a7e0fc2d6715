// Package codegen writes a checked program as the files `jadpo build`
// produces: build/plan.json (the typed IR, versioned and byte-identical for
// the same sources) and the store's schema for each SQL dialect.
package codegen

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"

	"github.com/jadpo/jadpo/check/ir"
)

// PlanFile is where the plan is written, relative to the project.
const PlanFile = "build/plan.json"

// EncodePlan renders the program as indented JSON with a final newline.
// encoding/json writes struct fields in declaration order and map keys
// sorted, and the checker sorts every slice, so equal programs give equal
// bytes.
func EncodePlan(p *ir.Program) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(p); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// DecodePlan reads a plan, refusing one of another version or with members
// this toolchain does not know.
func DecodePlan(b []byte) (*ir.Program, error) {
	var head struct {
		Version int `json:"version"`
	}
	if err := json.Unmarshal(b, &head); err != nil {
		return nil, fmt.Errorf("the plan is not valid JSON: %w", err)
	}
	if head.Version != ir.Version {
		return nil, fmt.Errorf("the plan is version %d; this toolchain runs version %d: run `jadpo build` again", head.Version, ir.Version)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var p ir.Program
	if err := dec.Decode(&p); err != nil {
		return nil, fmt.Errorf("the plan cannot be read: %w", err)
	}
	return &p, nil
}

// Output is what `jadpo build` writes besides the plan: the store's schema
// per dialect (file name -> SQL text).
type Output struct {
	Schemas map[string]string // "postgres" -> DDL
	// Files are further files by path relative to the project
	// ("build/workers/worker.mjs"), written as the others are.
	Files map[string][]byte
}

// Write writes build/plan.json and build/sql/<dialect>.sql under dir. A file
// whose content is unchanged is not rewritten.
func Write(dir string, p *ir.Program, out Output) ([]string, error) {
	plan, err := EncodePlan(p)
	if err != nil {
		return nil, err
	}
	files := map[string][]byte{PlanFile: plan}
	for dialect, sql := range out.Schemas {
		files[filepath.ToSlash(filepath.Join("build", "sql", dialect+".sql"))] = []byte(sql)
	}
	for name, b := range out.Files {
		files[name] = b
	}
	names := make([]string, 0, len(files))
	for name := range files {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		path := filepath.Join(dir, filepath.FromSlash(name))
		if old, err := os.ReadFile(path); err == nil && bytes.Equal(old, files[name]) {
			continue
		}
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return nil, err
		}
		tmp := path + ".tmp"
		if err := os.WriteFile(tmp, files[name], 0o644); err != nil {
			return nil, err
		}
		if err := os.Rename(tmp, path); err != nil {
			return nil, err
		}
	}
	return names, nil
}
