package api

import (
	"reflect"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// wordPackages are the packages whose types api.Client's methods may take
// and return besides the standard library's, each with its reason.
var wordPackages = map[string]string{
	"github.com/flowgate/flowgate/host/api/apitype": "the API's own words",
	"github.com/flowgate/flowgate/sdk":              "the records and requests plugin authors see",
	// A task as the store keeps it, with the runner's pids `tasks show`
	// prints; apitype names it apitype.Task, and it is itself a leaf.
	"github.com/flowgate/flowgate/host/stored": "the stored task (apitype.Task)",
}

// Every parameter and result of api.Client's methods, of the interfaces
// it embeds and of those its clients offer beside it (TaskLogs,
// FlowWaiter, Changes) is a word of apitype or sdk, or the standard
// library's: a command that calls them needs no type of the engine.
// Broadcast, StreamStop, Local and Remote stay in api: they are the
// machinery that serves or carries the calls (a wake-up, the end of
// streams at shutdown, the two clients), named in no signature here.
func TestClientSpeaksOnlyWords(t *testing.T) {
	t.Parallel()
	for _, it := range []reflect.Type{
		reflect.TypeFor[Client](), reflect.TypeFor[TaskLogs](), reflect.TypeFor[FlowWaiter](), reflect.TypeFor[Changes](),
	} {
		for i := range it.NumMethod() {
			m := it.Method(i)
			for j := range m.Type.NumIn() {
				for _, bad := range foreignTypes(m.Type.In(j)) {
					t.Errorf("%s.%s takes %s: give it a type in apitype and convert at the seam (toapi*.go)", it.Name(), m.Name, bad)
				}
			}
			for j := range m.Type.NumOut() {
				for _, bad := range foreignTypes(m.Type.Out(j)) {
					t.Errorf("%s.%s returns %s: give it a type in apitype and convert at the seam (toapi*.go)", it.Name(), m.Name, bad)
				}
			}
		}
	}
}

// A type of another package is found, through pointers, slices, maps,
// channels and functions.
func TestForeignTypesFindsEngineTypes(t *testing.T) {
	t.Parallel()
	require.Empty(t, foreignTypes(reflect.TypeFor[func(map[string][]*GatewayStatus) <-chan struct{}]()))
	require.Equal(t, []string{"api.Local"}, foreignTypes(reflect.TypeFor[func(int) []*Local]()))
	require.Equal(t, []string{"api.StreamStop"}, foreignTypes(reflect.TypeFor[map[string]StreamStop]()))
}

// foreignTypes lists the named types in t that are neither the standard
// library's nor of wordPackages.
func foreignTypes(t reflect.Type) []string {
	switch t.Kind() {
	case reflect.Pointer, reflect.Slice, reflect.Array, reflect.Chan:
		if t.Name() == "" {
			return foreignTypes(t.Elem())
		}
	case reflect.Map:
		if t.Name() == "" {
			return append(foreignTypes(t.Key()), foreignTypes(t.Elem())...)
		}
	case reflect.Func:
		if t.Name() != "" {
			break
		}
		var out []string
		for i := range t.NumIn() {
			out = append(out, foreignTypes(t.In(i))...)
		}
		for i := range t.NumOut() {
			out = append(out, foreignTypes(t.Out(i))...)
		}
		return out
	}
	p := t.PkgPath()
	first, _, _ := strings.Cut(p, "/")
	if p == "" || !strings.Contains(first, ".") || wordPackages[p] != "" {
		return nil
	}
	return []string{t.String()}
}
