package sdk_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/flowgate/flowgate/sdk"
)

// recordsSchema is the JSON Schema of the records the controller protocol
// carries as JSON; plugin authors in other languages read it.
const recordsSchema = "proto/flowgate/controller/v1/records.schema.json"

var updateSchema = flag.Bool("update-schema", false, "rewrite "+recordsSchema+" from the Go types")

// The committed JSON Schema of the protocol's records is the one the Go
// types make: a field added, renamed or retyped in sdk fails here until
// the schema is regenerated (go test ./sdk -run TestRecordsSchema
// -update-schema) and committed, so other languages never miss it.
func TestRecordsSchema(t *testing.T) {
	got := generateRecordsSchema()
	if *updateSchema {
		if err := os.WriteFile(recordsSchema, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(recordsSchema)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("%s does not match the sdk's Go types; regenerate it with go test ./sdk -run TestRecordsSchema -update-schema, and commit it", recordsSchema)
	}
}

// schemaGen builds JSON Schema definitions from Go types, as
// encoding/json writes them.
type schemaGen struct {
	defs  map[string]any
	enums map[reflect.Type][]string
}

func generateRecordsSchema() []byte {
	g := &schemaGen{defs: map[string]any{}, enums: map[reflect.Type][]string{
		reflect.TypeFor[sdk.FlowStatus](): stringsOf(sdk.FlowStatuses()),
		reflect.TypeFor[sdk.TaskStatus](): stringsOf(sdk.TaskStatuses()),
		reflect.TypeFor[sdk.SyncMode]():   {string(sdk.SyncManaged), string(sdk.SyncTaskMirrored)},
		reflect.TypeFor[sdk.EventType](): {string(sdk.EventFlowStarted), string(sdk.EventTaskFinished), string(sdk.EventTaskMilestone),
			string(sdk.EventFlowResumed), string(sdk.EventFlowCancelRequested), string(sdk.EventFlowWoken)},
	}}
	top := map[string]any{}
	for _, t := range []reflect.Type{
		reflect.TypeFor[sdk.Flow](), reflect.TypeFor[sdk.Task](), reflect.TypeFor[sdk.Event](),
		reflect.TypeFor[sdk.TaskSpec](), reflect.TypeFor[sdk.ContinueRequest](), reflect.TypeFor[sdk.Woken](),
	} {
		top[t.Name()] = g.schema(t)
	}
	doc := map[string]any{
		"$schema":     "https://json-schema.org/draft/2020-12/schema",
		"$id":         "https://github.com/flowgate/flowgate/sdk/proto/flowgate/controller/v1/records.schema.json",
		"title":       "flowgate controller protocol records (v1)",
		"description": "The JSON the *_json fields of controller.proto carry. Generated from the Go types in package sdk by TestRecordsSchema; do not edit. Readers must ignore properties they do not know: new ones are added without a protocol version change.",
		"properties":  top,
		"$defs":       g.defs,
	}
	b, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		panic(err)
	}
	return append(b, '\n')
}

func stringsOf[S ~string](xs []S) []string {
	out := make([]string, len(xs))
	for i, x := range xs {
		out[i] = string(x)
	}
	return out
}

func (g *schemaGen) schema(t reflect.Type) map[string]any {
	switch t {
	case reflect.TypeFor[time.Time]():
		return map[string]any{"type": "string", "format": "date-time"}
	case reflect.TypeFor[json.RawMessage]():
		return map[string]any{"description": "any JSON value, kept as written"}
	case reflect.TypeFor[sdk.Duration]():
		return map[string]any{"type": "string", "description": "a Go duration such as \"1m30s\""}
	}
	if values, ok := g.enums[t]; ok {
		return map[string]any{"type": "string", "enum": values}
	}
	switch t.Kind() {
	case reflect.Pointer:
		return map[string]any{"anyOf": []any{g.schema(t.Elem()), map[string]any{"type": "null"}}}
	case reflect.String:
		return map[string]any{"type": "string"}
	case reflect.Bool:
		return map[string]any{"type": "boolean"}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return map[string]any{"type": "integer"}
	case reflect.Float32, reflect.Float64:
		return map[string]any{"type": "number"}
	case reflect.Slice, reflect.Array:
		return map[string]any{"type": []string{"array", "null"}, "items": g.schema(t.Elem())}
	case reflect.Map:
		return map[string]any{"type": []string{"object", "null"}, "additionalProperties": g.schema(t.Elem())}
	case reflect.Struct:
		name := t.Name()
		if _, done := g.defs[name]; !done {
			g.defs[name] = nil // a recursive type refers to itself
			g.defs[name] = g.object(t)
		}
		return map[string]any{"$ref": "#/$defs/" + name}
	}
	panic("records schema: no JSON Schema for " + t.String())
}

// object is a struct's schema: its JSON fields, embedded structs inlined,
// those without omitempty or omitzero required.
func (g *schemaGen) object(t reflect.Type) map[string]any {
	props, required := map[string]any{}, []string{}
	var walk func(t reflect.Type)
	walk = func(t reflect.Type) {
		for f := range t.Fields() {
			tag := f.Tag.Get("json")
			if !f.IsExported() || tag == "-" {
				continue
			}
			name, opts, _ := strings.Cut(tag, ",")
			if f.Anonymous && name == "" && f.Type.Kind() == reflect.Struct {
				walk(f.Type)
				continue
			}
			if name == "" {
				name = f.Name
			}
			props[name] = g.schema(f.Type)
			if !strings.Contains(opts, "omitempty") && !strings.Contains(opts, "omitzero") {
				required = append(required, name)
			}
		}
	}
	walk(t)
	return map[string]any{"type": "object", "properties": props, "required": required}
}
