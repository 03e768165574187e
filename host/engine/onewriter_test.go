package engine_test

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// storeImport is the package whose Tx type is a write transaction.
const storeImport = "github.com/flowgate/flowgate/host/store"

// bboltImport is the embedded database only the store's backend may use.
const bboltImport = "go.etcd.io/bbolt"

// writerAllowed reports whether the package in dir (slash-separated,
// relative to the module root) may open store write transactions: the
// engine, the store and its backends and conformance suite.
func writerAllowed(dir string) bool {
	return dir == "host/engine" || inStore(dir)
}

// inStore reports whether dir is host/store or a directory under it.
func inStore(dir string) bool { return dir == "host/store" || strings.HasPrefix(dir, "host/store/") }

// writerViolations lists what in one non-test source file of the package
// in dir breaks the one-writer rule: a reference to the store's Tx type
// (under whatever name the file imports the store as, a dot import
// included) outside the engine and the store, and an import of bbolt
// outside the store.
func writerViolations(fset *token.FileSet, dir, name string, src any) ([]string, error) {
	f, err := parser.ParseFile(fset, name, src, parser.SkipObjectResolution)
	if err != nil {
		return nil, err
	}
	var out []string
	storeNames := map[string]bool{}
	for _, imp := range f.Imports {
		path, _ := strconv.Unquote(imp.Path.Value)
		switch {
		case (path == bboltImport || strings.HasPrefix(path, bboltImport+"/")) && !inStore(dir):
			out = append(out, fmt.Sprintf("%s: imports %s; only host/store may use bbolt", fset.Position(imp.Pos()), path))
		case path == storeImport && !writerAllowed(dir):
			local := "store"
			if imp.Name != nil {
				local = imp.Name.Name
			}
			if local == "." {
				out = append(out, fmt.Sprintf("%s: dot-imports %s; import it by name so a write transaction shows", fset.Position(imp.Pos()), path))
			}
			storeNames[local] = true
		}
	}
	if len(storeNames) == 0 {
		return out, nil
	}
	ast.Inspect(f, func(n ast.Node) bool {
		sel, ok := n.(*ast.SelectorExpr)
		if !ok || sel.Sel.Name != "Tx" {
			return true
		}
		if id, ok := sel.X.(*ast.Ident); ok && storeNames[id.Name] {
			out = append(out, fmt.Sprintf("%s: uses %s.Tx, a store write transaction; write through host/engine (UpdateRecords for records of your own)", fset.Position(sel.Pos()), id.Name))
		}
		return true
	})
	return out, nil
}

// TestOneWriter fails when a package other than the engine and the store
// opens a store write transaction, or one outside the store imports bbolt:
// the engine is the only writer of records (see the package doc).
func TestOneWriter(t *testing.T) {
	t.Parallel()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	require.NoError(t, err)
	_, err = os.Stat(filepath.Join(root, "go.mod"))
	require.NoError(t, err, "the module root is two levels above host/engine")
	fset := token.NewFileSet()
	var violations []string
	files := 0
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path != root && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" || d.Name() == "vendor") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		rel, err := filepath.Rel(root, filepath.Dir(path))
		if err != nil {
			return err
		}
		files++
		v, err := writerViolations(fset, filepath.ToSlash(rel), path, nil)
		violations = append(violations, v...)
		return err
	})
	require.NoError(t, err)
	require.Greater(t, files, 100, "the walk found the module's sources")
	require.Empty(t, violations, "only host/engine and host/store may open store write transactions")
}

// TestOneWriterCatches shows the check failing on sources that break the
// rule, and passing those that keep it.
func TestOneWriterCatches(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, dir, src string
		bad            int
	}{
		{"write transaction outside the engine", "host/scheduler", `package scheduler
import "github.com/flowgate/flowgate/host/store"
func put(st store.Store) error { return st.Update(t.Context(), func(tx store.Tx) error { return nil }) }`, 1},
		{"renamed import", "cli", `package cli
import kv "github.com/flowgate/flowgate/host/store"
var _ kv.Tx`, 1},
		{"dot import", "cli", `package cli
import . "github.com/flowgate/flowgate/host/store"
var _ Tx`, 1},
		{"bbolt outside the store", "host/engine", `package engine
import bolt "go.etcd.io/bbolt"
var _ *bolt.DB`, 1},
		{"bbolt errors outside the store", "host/maintenance", `package maintenance
import "go.etcd.io/bbolt/errors"
var _ = errors.ErrTxClosed`, 1},
		{"reads are fine", "host/scheduler", `package scheduler
import "github.com/flowgate/flowgate/host/store"
var _ store.ReadTx
var _ store.Item`, 0},
		{"the engine writes", "host/engine", `package engine
import "github.com/flowgate/flowgate/host/store"
var _ store.Tx`, 0},
		{"a backend implements Tx", "host/store/etcd", `package etcd
import "github.com/flowgate/flowgate/host/store"
import "go.etcd.io/bbolt"
var _ store.Tx
var _ *bbolt.DB`, 0},
		{"another package's Tx", "host/scheduler", `package scheduler
import "database/sql"
var _ *sql.Tx`, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			v, err := writerViolations(token.NewFileSet(), tc.dir, "x.go", tc.src)
			require.NoError(t, err)
			require.Len(t, v, tc.bad, "%v", v)
		})
	}
}
