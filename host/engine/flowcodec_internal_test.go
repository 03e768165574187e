package engine

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/sdk"
)

// codecStates are states a flow may hold: what controllers write, and
// the odd ones json.Marshal changes (whitespace, HTML characters, the
// line and paragraph separators) or refuses.
var codecStates = map[string]json.RawMessage{
	"nil":            nil,
	"empty":          {},
	"null":           json.RawMessage(`null`),
	"number":         json.RawMessage(`-12.5e+3`),
	"string":         json.RawMessage(`"step \"one\" \\ \u00e9 \ud83d\ude00 \/"`),
	"empty object":   json.RawMessage(`{}`),
	"nested":         json.RawMessage(`{"a":[1,{"b":[[],{}],"c":null},true,false,"x"],"state":0,"d":{"e":{"f":[0.5,-0,1E9]}}}`),
	"unicode":        json.RawMessage(`{"name":"Zoë ✓ 日本語 🚀","raw":"é"}`),
	"escaped html":   json.RawMessage(`{"cmd":"a \u003c b \u0026\u0026 c \u003e d"}`),
	"html":           json.RawMessage(`{"cmd":"a < b && c > d"}`),
	"separators":     json.RawMessage("{\"text\":\"line\u2028para\u2029end\"}"),
	"whitespace":     json.RawMessage("{ \"a\" : [ 1 , 2 ],\n\t\"b\":\r\n{} } "),
	"leading space":  json.RawMessage(` {"a":1}`),
	"invalid":        json.RawMessage(`{"a":}`),
	"truncated":      json.RawMessage(`{"a":"b`),
	"control char":   json.RawMessage("\"a\x01b\""),
	"pipeline state": pipelineState(40),
}

// pipelineState is a state shaped like the pipeline controller's, with
// steps' results, of about 100 bytes a step.
func pipelineState(steps int) json.RawMessage {
	type result struct {
		Status   string            `json:"status"`
		Output   string            `json:"output"`
		Attempts int               `json:"attempts"`
		Took     float64           `json:"took"`
		Env      map[string]string `json:"env,omitempty"`
	}
	st := struct {
		File    string            `json:"file"`
		Step    int               `json:"step"`
		Results map[string]result `json:"results"`
	}{File: "pipelines/build.lobster", Results: map[string]result{}}
	for i := range steps {
		st.Results[fmt.Sprintf("step-%02d", i)] = result{
			Status: "succeeded", Output: fmt.Sprintf("built <target %d> & \"tested\" it — ok", i), Attempts: 1, Took: 0.125 * float64(i),
			Env: map[string]string{"STEP": fmt.Sprint(i)},
		}
	}
	b, err := json.Marshal(st)
	if err != nil {
		panic(err)
	}
	return b
}

// codecFlow is a flow with every field set, state aside.
func codecFlow(state json.RawMessage) *sdk.Flow {
	at := time.Date(2026, 12, 2, 19, 0, 0, 123456789, time.UTC)
	return &sdk.Flow{
		ID: "fl_01", SyncMode: sdk.SyncManaged, OwnerKey: `owner "<key>"`, ControllerID: "pipeline", Revision: 7,
		Status: sdk.FlowRunning, Goal: `ship ,"state":0 & more`, CurrentStep: "step-03", State: state,
		Wait: json.RawMessage(`{"kind":"approval","step":"s"}`), BlockedSummary: "<b>", CancelRequestedAt: at,
		NotifyPolicy: sdk.NotifyDoneOnly, Origin: "cli", CreatedAt: at, UpdatedAt: at, EndedAt: at, ChainID: "fl_00",
		SourceFlowID: "fl_00", SourceRevision: 3, Labels: map[string]string{"state": "0", "team": "a&b"},
		NotifyTo: []string{"ops"}, Decisions: map[string]sdk.Decision{"state": {}},
	}
}

// TestEncodeFlowIsMarshal holds encodeFlow's bytes, and its refusals,
// to json.Marshal's over every state, with the other fields set and
// with them empty.
func TestEncodeFlowIsMarshal(t *testing.T) {
	t.Parallel()
	for name, state := range codecStates {
		for _, f := range []*sdk.Flow{codecFlow(state), {ID: "fl_02", State: state}} {
			want, wantErr := json.Marshal(storedFlow{Flow: f})
			got, err := encodeFlow(f)
			if wantErr != nil {
				require.Error(t, err, name)
				continue
			}
			require.NoError(t, err, name)
			require.Equal(t, string(want), string(got), name)
			require.Equal(t, string(state), string(f.State), "%s: the flow is left as it was", name)
		}
	}
}

// TestUnmarshalFlowIsUnmarshal holds unmarshalFlow's flows and heads,
// and its errors, to json.Unmarshal's over records json.Marshal wrote
// and records it did not.
func TestUnmarshalFlowIsUnmarshal(t *testing.T) {
	t.Parallel()
	records := map[string]string{
		"state first":        `{"state":{"a":1},"id":"fl_1","status":"running"}`,
		"state only":         `{"state":[1,2]}`,
		"state last":         `{"id":"fl_1","state":"s"}`,
		"no state":           `{"id":"fl_1","sync_mode":"managed"}`,
		"spaced":             " {\n \"id\" : \"fl_1\" ,\t\"state\" : { \"a\" : [ 1 ] } , \"goal\" : \"g\" }\n",
		"null state":         `{"id":"fl_1","state":null}`,
		"repeated state":     `{"id":"fl_1","state":{"a":1},"state":{"b":2}}`,
		"other case":         `{"id":"fl_1","State":{"a":1}}`,
		"both cases":         `{"id":"fl_1","state":1,"STATE":{"a":1}}`,
		"escaped key":        `{"id":"fl_1","st\u0061te":{"a":1}}`,
		"folded key":         `{"id":"fl_1","ſtate":{"a":1}}`,
		"legacy revision":    `{"id":"fl_1","revision":4,"state":{}}`,
		"empty":              `{}`,
		"not an object":      `[1]`,
		"truncated":          `{"id":"fl_1","state":{"a":1}`,
		"trailing":           `{"id":"fl_1"} x`,
		"bad state":          `{"id":"fl_1","state":{"a":}}`,
		"wrong type":         `{"id":5,"state":{}}`,
		"wrong type in rest": `{"state":{},"created_at":"yesterday"}`,
		"deep":               `{"id":"fl_1","state":` + strings.Repeat("[", 600) + strings.Repeat("]", 600) + `}`,
	}
	for name, state := range codecStates {
		if b, err := json.Marshal(storedFlow{Flow: codecFlow(state)}); err == nil {
			records["marshalled "+name] = string(b)
		}
	}
	for name, rec := range records {
		var want, got sdk.Flow
		wantErr := json.Unmarshal([]byte(rec), &want)
		err := unmarshalFlow([]byte(rec), &got)
		requireSameDecode(t, name, wantErr, err, want, got)
		var wantHead, gotHead flowHead
		wantErr = json.Unmarshal([]byte(rec), &wantHead)
		err = unmarshalFlow([]byte(rec), &gotHead)
		requireSameDecode(t, name+" (head)", wantErr, err, wantHead, gotHead)
	}
}

func requireSameDecode[T any](t *testing.T, name string, wantErr, err error, want, got T) {
	t.Helper()
	if wantErr != nil {
		require.EqualError(t, err, wantErr.Error(), name)
		return
	}
	require.NoError(t, err, name)
	require.Equal(t, want, got, name)
}

// TestFlowFieldsBeforeStateAreStrings holds what encodeFlow's splice
// relies on: nothing sdk.Flow encodes before its state can hold the
// state's mark outside a string.
func TestFlowFieldsBeforeStateAreStrings(t *testing.T) {
	t.Parallel()
	ty := reflect.TypeFor[sdk.Flow]()
	for i := range ty.NumField() {
		fd := ty.Field(i)
		if fd.Name == "State" {
			require.Equal(t, `json:"state,omitempty"`, string(fd.Tag))
			return
		}
		if fd.Name == "Revision" {
			continue // storedFlow's own Revision shadows it, and is nil
		}
		require.Equal(t, reflect.String, fd.Type.Kind(), "sdk.Flow.%s is encoded before State", fd.Name)
		_, marshaler := reflect.New(fd.Type).Interface().(json.Marshaler)
		require.False(t, marshaler, "sdk.Flow.%s encodes itself", fd.Name)
	}
	t.Fatal("sdk.Flow has no State field")
}

// FuzzRawValid holds rawScan to json.Valid, and its plain to what
// json.Marshal writes for a json.RawMessage.
func FuzzRawValid(f *testing.F) {
	for _, s := range codecStates {
		f.Add([]byte(s))
	}
	f.Add([]byte(`[01]`))
	f.Add([]byte(`{"a":1,}`))
	f.Add([]byte(`1.e5`))
	f.Add([]byte(`"\u12G4"`))
	f.Fuzz(func(t *testing.T, b []byte) {
		valid, plain := rawValid(b)
		if len(b) < 2*rawMaxDepth {
			require.Equal(t, json.Valid(b), valid, "%q", b)
		} else if valid {
			require.True(t, json.Valid(b), "%q", b)
		}
		if plain {
			out, err := json.Marshal(json.RawMessage(b))
			require.NoError(t, err)
			require.Equal(t, string(b), string(out))
		} else if valid {
			out, err := json.Marshal(json.RawMessage(b))
			require.NoError(t, err)
			require.NotEqual(t, string(b), string(out), "%q is written unchanged but was not found plain", b)
		}
	})
}

// FuzzUnmarshalFlow holds unmarshalFlow to json.Unmarshal over any
// bytes.
func FuzzUnmarshalFlow(f *testing.F) {
	f.Add([]byte(`{"id":"fl_1","state":{"a":[1,"<"]},"goal":"g"}`))
	f.Add([]byte(`{"state":1,"State":2}`))
	f.Add([]byte(` { "state" : null } `))
	f.Fuzz(func(t *testing.T, b []byte) {
		var want, got sdk.Flow
		wantErr := json.Unmarshal(b, &want)
		err := unmarshalFlow(b, &got)
		requireSameDecode(t, fmt.Sprintf("%q", b), wantErr, err, want, got)
	})
}

// BenchmarkFlowCodec times a pipeline flow's record (40 steps' state,
// about 5 KB) through the flow codec and through encoding/json alone.
func BenchmarkFlowCodec(b *testing.B) {
	f := codecFlow(pipelineState(40))
	rec, err := json.Marshal(storedFlow{Flow: f})
	require.NoError(b, err)
	b.Logf("record: %d bytes, state %d", len(rec), len(f.State))
	run := func(name string, op func() error) {
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(len(rec)))
			b.ReportAllocs()
			for b.Loop() {
				if err := op(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	run("encode/codec", func() error { _, err := encodeFlow(f); return err })
	run("encode/json", func() error { _, err := json.Marshal(storedFlow{Flow: f}); return err })
	run("decode/codec", func() error { return unmarshalFlow(rec, new(sdk.Flow)) })
	run("decode/json", func() error { return json.Unmarshal(rec, new(sdk.Flow)) })
	run("head/codec", func() error { return unmarshalFlow(rec, new(flowHead)) })
	run("head/json", func() error { return json.Unmarshal(rec, new(flowHead)) })
}
