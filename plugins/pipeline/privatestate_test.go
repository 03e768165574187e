package pipeline_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// outsideUse is what code outside this package may name of it: the
// controller, its options and the checks the CLI runs on a workflow
// before it starts one. None of it reads a flow. The flow's state and
// wait are the controller's own: what it produces is read from the
// flow's fields (sdk.Flow.Output, sdk.Flow.Decisions) and its gates as
// sdk.Wait, and its progress from the views it publishes (the plan,
// sdk.PlanKey; the stage reports, sdk.StagesKey, read with
// flowrule.PlanOf and sdk.StageReportsOf), never by decoding the
// state with this package's types.
var outsideUse = map[string]bool{
	"New": true, "NewFrom": true, "NewWithOptions": true, "Options": true, "HomeOptions": true, "OptionsFrom": true,
	"Name": true, "Version": true, "CheckBound": true, "CheckStageSecret": true, "MissingStageHint": true,
	"CommandSet": true, "ExecutableStages": true, "ExecutableStage": true, "IsModelStage": true,
	"HomeEnv": true, "StateDir": true, "StagesDir": true, "PriorOutputEnv": true, "StageArgsEnv": true, "StateScope": true,
}

const pipelinePath = "github.com/flowgate/flowgate/plugins/pipeline"

// No file of the module outside this package, tests aside, names
// anything of it that reads a flow's state or wait: a name not in
// outsideUse fails here, so reading the controller's private state from
// outside is a decision someone makes in this list, not an accident.
func TestNothingOutsideReadsThePipelinesState(t *testing.T) {
	t.Parallel()
	root := filepath.Join("..", "..")
	fset := token.NewFileSet()
	var bad []string
	importers := 0
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch rel, _ := filepath.Rel(root, path); {
			case rel == filepath.Join("plugins", "pipeline"), d.Name() == "testdata", d.Name() == "node_modules", strings.HasPrefix(d.Name(), ".") && rel != ".":
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		name := ""
		for _, imp := range f.Imports {
			if p, _ := strconv.Unquote(imp.Path.Value); p == pipelinePath {
				name = "pipeline"
				if imp.Name != nil {
					name = imp.Name.Name
				}
			}
		}
		if name == "" {
			return nil
		}
		importers++
		ast.Inspect(f, func(n ast.Node) bool {
			sel, ok := n.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			if x, ok := sel.X.(*ast.Ident); ok && x.Name == name && !outsideUse[sel.Sel.Name] {
				bad = append(bad, fset.Position(sel.Pos()).String()+": "+name+"."+sel.Sel.Name)
			}
			return true
		})
		return nil
	})
	require.NoError(t, err)
	require.Positive(t, importers, "the walk found the files that import the pipeline controller")
	sort.Strings(bad)
	require.Empty(t, bad, "code outside plugins/pipeline names what reads the controller's state; read the flow's fields (Output, Decisions) and its wait as an sdk.Wait instead")
}
