package cli_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/flowgate/flowgate/sdk"
)

// stagePluginCmd makes this test binary a controller plugin that
// provides pipeline stages (see TestMain): `stagePluginCmd NAME`. The
// plugin "stages" provides text.upper, note.once and remote.fail; the
// plugin "clash" declares a stage named like the built-in where.
const stagePluginCmd = "fake-stage-plugin"

// notesEnv names the file note.once appends each call's key to.
const notesEnv = "FLOWGATE_TEST_NOTES"

// stagePlugin drives no flows; it only provides stages.
type stagePlugin struct{ name string }

var _ sdk.StageProvider = stagePlugin{}

func (p stagePlugin) Info(context.Context) (sdk.Info, error) {
	info := sdk.Info{Name: p.name, Version: "test", APIVersion: sdk.APIVersion}
	switch p.name {
	case "clash":
		info.Stages = []sdk.Stage{{Name: "where", Description: "A stage that may not be"}}
	default:
		info.Stages = []sdk.Stage{
			{Name: "text.upper", Description: "Upper-case each string item, adding --suffix"},
			{Name: "note.once", Description: "Note the call's key in a file; pass the items on", SideEffects: []string{"writes_file"}},
			{Name: "remote.fail", Description: "Fail as a remote service would", SideEffects: []string{"network"}},
		}
	}
	return info, nil
}

func (stagePlugin) HandleEvent(context.Context, sdk.Host, sdk.Event) error { return nil }

func (stagePlugin) Shutdown(context.Context) error { return nil }

func (stagePlugin) RunStage(_ context.Context, _ sdk.Host, call sdk.StageCall) (json.RawMessage, error) {
	var items []any
	if err := json.Unmarshal(call.Items, &items); err != nil {
		return nil, err
	}
	switch call.Name {
	case "text.upper":
		var args struct{ Suffix string }
		if err := json.Unmarshal(call.Args, &args); err != nil {
			return nil, err
		}
		for i, it := range items {
			if s, ok := it.(string); ok {
				items[i] = strings.ToUpper(s) + args.Suffix
			}
		}
	case "note.once":
		f, err := os.OpenFile(os.Getenv(notesEnv), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
		if err != nil {
			return nil, err
		}
		_, err = fmt.Fprintln(f, call.Key)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return nil, err
		}
	case "remote.fail":
		return nil, errors.New("the mail service refused the request: quota spent; try again in an hour")
	}
	return json.Marshal(items)
}
