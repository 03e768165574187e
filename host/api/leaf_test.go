package api

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// leafImports are the packages the API's words may name besides the
// standard library: a command that speaks them imports nothing more.
var leafImports = []string{
	"github.com/flowgate/flowgate/sdk",
	"github.com/flowgate/flowgate/host/stored",
	"github.com/flowgate/flowgate/host/api/apitype",
}

// leaf reports whether path is one of leafImports or in the standard
// library (whose first path element has no dot).
func leaf(path string) bool {
	first, _, _ := strings.Cut(path, "/")
	return slices.Contains(leafImports, path) || !strings.Contains(first, ".")
}

// apitype imports only the standard library, sdk and host/stored, and
// every type alias of package api names a type there: no answer of the
// Client is an engine type under another name.
func TestTheAPIWordsAreALeaf(t *testing.T) {
	t.Parallel()
	fset := token.NewFileSet()
	files, err := filepath.Glob(filepath.Join("apitype", "*.go"))
	require.NoError(t, err)
	require.NotEmpty(t, files)
	for _, name := range files {
		f, err := parser.ParseFile(fset, name, nil, parser.ImportsOnly)
		require.NoError(t, err)
		for _, imp := range f.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			require.True(t, leaf(path), "%s imports %s: apitype may import only the standard library, sdk and host/stored", name, path)
		}
	}

	files, err = filepath.Glob("*.go")
	require.NoError(t, err)
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		require.NoError(t, err)
		imports := map[string]string{}
		for _, imp := range f.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			local := filepath.Base(path)
			if imp.Name != nil {
				local = imp.Name.Name
			}
			imports[local] = path
		}
		ast.Inspect(f, func(n ast.Node) bool {
			spec, ok := n.(*ast.TypeSpec)
			if !ok || !spec.Assign.IsValid() {
				return true
			}
			if sel, ok := spec.Type.(*ast.SelectorExpr); ok {
				pkg := imports[sel.X.(*ast.Ident).Name]
				require.True(t, leaf(pkg), "%s: api.%s is an alias of %s.%s; give it a type in apitype and convert at the seam (toapi*.go)", name, spec.Name.Name, pkg, sel.Sel.Name)
			}
			return true
		})
	}
}
