package engine

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"testing"

	"github.com/flowgate/flowgate/host/store"
	"github.com/flowgate/flowgate/host/stored"
	"github.com/flowgate/flowgate/sdk"
)

func benchTaskItem(b *testing.B) store.Item {
	code := 0
	t := stored.Task{Task: sdk.Task{ID: "t1", FlowID: "f1", Status: sdk.TaskSucceeded, OwnerKey: "bench", Label: "dispatch", Runtime: "cli", Attempts: 1, ExitCode: &code,
		Spec: sdk.TaskSpec{Argv: []string{"/usr/bin/true"}}}, PID: 1234, PIDStartTime: 99, ShimPID: 77, ShimStartTime: 88}
	raw, err := json.Marshal(&t)
	if err != nil {
		b.Fatal(err)
	}
	return store.Item{Key: taskKey("t1"), Value: raw}
}

// BenchmarkDecodeTaskRecord decodes one task's record: as encoding/json
// does (decode), as a read of the same bytes again does (memo), and as
// reads of records the memo does not hold do, a point read keeping each
// (keep-miss) and a listing's read keeping none (scan-miss).
func BenchmarkDecodeTaskRecord(b *testing.B) {
	it := benchTaskItem(b)
	var many []store.Item
	for i := range 4096 {
		var t stored.Task
		if err := json.Unmarshal(it.Value, &t); err != nil {
			b.Fatal(err)
		}
		t.ID = fmt.Sprintf("m%d", i)
		raw, _ := json.Marshal(&t)
		many = append(many, store.Item{Key: taskKey(t.ID), Value: raw})
	}
	for _, miss := range []struct {
		name string
		read func(store.Item) (*stored.Task, error)
	}{{"keep-miss", decodeRecord[stored.Task]}, {"scan-miss", scanRecord[stored.Task]}} {
		b.Run(miss.name, func(b *testing.B) {
			i := 0
			for b.Loop() {
				i++
				if _, err := miss.read(many[i%len(many)]); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	b.Run("decode", func(b *testing.B) {
		for b.Loop() {
			if _, err := decodeValid[stored.Task](it); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("memo", func(b *testing.B) {
		for b.Loop() {
			if _, err := decodeRecord[stored.Task](it); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// fill sets every exported field reachable from v to a value that is not
// zero: pointers, slices and maps get one element each, an empty
// interface a map holding a slice, so that a copy sharing any of them
// shows.
func fill(v reflect.Value, depth int) {
	if depth > 8 {
		return
	}
	switch v.Kind() {
	case reflect.Pointer:
		p := reflect.New(v.Type().Elem())
		fill(p.Elem(), depth+1)
		v.Set(p)
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				fill(v.Field(i), depth+1)
			}
		}
	case reflect.Slice:
		s := reflect.MakeSlice(v.Type(), 1, 1)
		fill(s.Index(0), depth+1)
		v.Set(s)
	case reflect.Array:
		for i := range v.Len() {
			fill(v.Index(i), depth+1)
		}
	case reflect.Map:
		m := reflect.MakeMap(v.Type())
		k, e := reflect.New(v.Type().Key()).Elem(), reflect.New(v.Type().Elem()).Elem()
		fill(k, depth+1)
		fill(e, depth+1)
		m.SetMapIndex(k, e)
		v.Set(m)
	case reflect.Interface:
		if v.NumMethod() == 0 {
			v.Set(reflect.ValueOf(map[string]any{"k": []any{"v"}}))
		}
	case reflect.String:
		v.SetString("s")
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(1)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v.SetUint(1)
	case reflect.Float32, reflect.Float64:
		v.SetFloat(1)
	}
}

// shared returns the path of the first pointer, slice or map of b that
// is also a's, or "".
func shared(a, b reflect.Value, path string) string {
	switch a.Kind() {
	case reflect.Pointer, reflect.Map:
		if a.IsNil() {
			return ""
		}
		if a.UnsafePointer() == b.UnsafePointer() {
			return path
		}
		if a.Kind() == reflect.Pointer {
			return shared(a.Elem(), b.Elem(), path)
		}
		for it := a.MapRange(); it.Next(); {
			if p := shared(it.Value(), b.MapIndex(it.Key()), path+"["+fmt.Sprint(it.Key())+"]"); p != "" {
				return p
			}
		}
	case reflect.Slice:
		if a.Len() == 0 {
			return ""
		}
		if a.UnsafePointer() == b.UnsafePointer() {
			return path
		}
		for i := range a.Len() {
			if p := shared(a.Index(i), b.Index(i), fmt.Sprintf("%s[%d]", path, i)); p != "" {
				return p
			}
		}
	case reflect.Struct:
		for i := range a.NumField() {
			if a.Type().Field(i).IsExported() {
				if p := shared(a.Field(i), b.Field(i), path+"."+a.Type().Field(i).Name); p != "" {
					return p
				}
			}
		}
	case reflect.Interface:
		if !a.IsNil() {
			return shared(a.Elem(), b.Elem(), path)
		}
	}
	return ""
}

// TestCloneRecordSharesNothing holds cloneRecord to its promise for
// every field the memoized records have, including fields added after
// this test was written: a copy equals its original and shares none of
// its memory, so a caller that changes a record it read cannot change
// what the memo holds.
func TestCloneRecordSharesNothing(t *testing.T) {
	check := func(t *testing.T, orig, clone any) {
		t.Helper()
		if !reflect.DeepEqual(orig, clone) {
			t.Fatalf("the copy differs from its original:\n%+v\n%+v", orig, clone)
		}
		if p := shared(reflect.ValueOf(orig), reflect.ValueOf(clone), "record"); p != "" {
			t.Fatalf("the copy shares %s with its original", p)
		}
	}
	var task stored.Task
	fill(reflect.ValueOf(&task).Elem(), 0)
	check(t, &task, cloneRecord(&task))
	var flow sdk.Flow
	fill(reflect.ValueOf(&flow).Elem(), 0)
	check(t, &flow, cloneRecord(&flow))
	if task.Spec.Argv == nil || flow.State == nil {
		t.Fatal("fill left the records' slices nil: the check above checked nothing")
	}
}

// TestDecodeRecordMemo reads records through decodeRecord as the engine
// does: the same bytes again give an equal, unshared value; other bytes
// under the same key are decoded; a flow takes its revision from the
// item each time; a listing's read (scanRecord) keeps nothing; a damaged
// record is refused each time.
func TestDecodeRecordMemo(t *testing.T) {
	task := stored.Task{Task: sdk.Task{ID: "memo1", FlowID: "f1", Status: sdk.TaskRunning, OwnerKey: "o",
		Spec: sdk.TaskSpec{Argv: []string{"true"}}}}
	raw, _ := json.Marshal(&task)
	it := store.Item{Key: taskKey("memo1"), Value: raw}
	first, err := decodeRecord[stored.Task](it)
	if err != nil {
		t.Fatal(err)
	}
	first.Spec.Argv[0], first.Status = "changed", sdk.TaskFailed
	again, err := decodeRecord[stored.Task](it)
	if err != nil {
		t.Fatal(err)
	}
	if again.Spec.Argv[0] != "true" || again.Status != sdk.TaskRunning {
		t.Fatalf("a change to a record read earlier showed in a later read: %+v", again.Task)
	}
	task.Status = sdk.TaskSucceeded
	it.Value, _ = json.Marshal(&task)
	if now, err := decodeRecord[stored.Task](it); err != nil || now.Status != sdk.TaskSucceeded {
		t.Fatalf("new bytes under the same key: %+v, %v; want the new status", now, err)
	}

	flow := sdk.Flow{ID: "memof", Status: sdk.FlowRunning, SyncMode: sdk.SyncTaskMirrored, OwnerKey: "o"}
	fraw, err := encodeFlow(&flow)
	if err != nil {
		t.Fatal(err)
	}
	for _, rev := range []int64{3, 4} {
		f, err := decodeRecord[sdk.Flow](store.Item{Key: flowKey("memof"), Value: fraw, Revision: rev})
		if err != nil || f.Revision != rev {
			t.Fatalf("flow read at revision %d: %v, %v", rev, f, err)
		}
	}

	// A listing's read keeps nothing it decodes, and takes what is kept.
	listed := store.Item{Key: taskKey("memo3"), Value: []byte(`{"id":"memo3","flow_id":"f3","status":"queued"}`)}
	decoded.mu.Lock()
	delete(decoded.entries, listed.Key) // kept by an earlier pass of the tests
	decoded.mu.Unlock()
	if v, err := scanRecord[stored.Task](listed); err != nil || v.ID != "memo3" {
		t.Fatalf("scanRecord: %v, %v", v, err)
	}
	if memoGet[stored.Task](&decoded, listed.Key, listed.Value) != nil {
		t.Fatal("a record a listing decoded was kept")
	}
	if _, err := decodeRecord[stored.Task](listed); err != nil {
		t.Fatal(err)
	}
	if memoGet[stored.Task](&decoded, listed.Key, listed.Value) == nil {
		t.Fatal("a record a point read decoded was not kept")
	}

	bad := store.Item{Key: taskKey("memo2"), Value: []byte(`{"id":"memo2","status":"running"}`)}
	for range 2 {
		var damaged *DamagedRecord
		if _, err := decodeRecord[stored.Task](bad); !errors.As(err, &damaged) {
			t.Fatalf("a task without a flow id: %v, want a DamagedRecord", err)
		}
	}
}
