// Package codegen writes a checked program as the files `jadpo build`
// produces, in one call (Build): build/plan.json (the typed IR, versioned and
// byte-identical for the same sources), the store's schema for each SQL
// dialect (given by the caller, from the store packages) and, for the
// workers target, build/workers/ (codegen/workers).
package codegen

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"

	"github.com/jadpo/jadpo/check/ir"
	"github.com/jadpo/jadpo/codegen/workers"
	"github.com/jadpo/jadpo/lang/source"
)

// WriteError is a build output that could not be written.
type WriteError struct {
	Path string // relative to the project: build/plan.json
	Err  error
}

func (e *WriteError) Error() string { return fmt.Sprintf("cannot write %s: %v", e.Path, e.Err) }
func (e *WriteError) Unwrap() error { return e.Err }

// writeAtomic writes path through a temporary file of its own in the same
// folder and a rename: a reader, or another build at the same moment, sees
// the old file or the new one, whole.
func writeAtomic(path string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(tmp, 0o644) // CreateTemp makes 0600
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
	}
	return err
}

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

// Input is what a build takes besides the program. The schemas come from the
// store packages (runtime/store/postgres and sqlite own their SQL); the caller
// passes them so that codegen imports no store.
type Input struct {
	Schemas map[string]string // dialect -> DDL: "postgres" -> build/sql/postgres.sql
	// Workers also writes build/workers/ (codegen/workers): the Worker, its
	// wrangler.toml and its D1 migration, which is Schemas["sqlite"]. The
	// program must have passed check.CheckTarget for the workers target.
	Workers bool
}

// WorkerError is a Worker that could not be rendered (build/workers/).
type WorkerError struct{ Err error }

func (e *WorkerError) Error() string { return fmt.Sprintf("cannot write the Worker: %v", e.Err) }
func (e *WorkerError) Unwrap() error { return e.Err }

// Build writes everything `jadpo build` writes under dir: build/plan.json,
// build/sql/<dialect>.sql and, with in.Workers, build/workers/. A file whose
// content is unchanged is not rewritten. It returns the paths written,
// relative to dir; a file that cannot be written is a *WriteError, a Worker
// that cannot be rendered a *WorkerError.
func Build(dir string, p *ir.Program, in Input) ([]string, error) {
	plan, err := EncodePlan(p)
	if err != nil {
		return nil, err
	}
	files := map[string][]byte{PlanFile: plan}
	for dialect, sql := range in.Schemas {
		files[filepath.ToSlash(filepath.Join("build", "sql", dialect+".sql"))] = []byte(sql)
	}
	if in.Workers {
		worker, err := workers.Files(p, plan, in.Schemas["sqlite"])
		if err != nil {
			return nil, &WorkerError{Err: err}
		}
		for name, b := range worker {
			files[name] = b
		}
	}
	names := make([]string, 0, len(files))
	for name := range files {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		path := filepath.Join(dir, filepath.FromSlash(name))
		// Read no more than the new content, and never wait on a named pipe
		// (the rename replaces whatever stands there).
		if old, err := source.ReadLocalFile(path, int64(len(files[name]))); err == nil && bytes.Equal(old, files[name]) {
			continue
		}
		if err := writeAtomic(path, files[name]); err != nil {
			return nil, &WriteError{Path: name, Err: err}
		}
	}
	return names, nil
}
