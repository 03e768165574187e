package api

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/api/apitype"
	"github.com/flowgate/flowgate/host/engine"
)

// The API's types keep the engine's shapes: the same fields, in the same
// order, with the same JSON tags. A field added to an engine type fails
// here until apitype has it too.
func TestAPITypesHaveTheEngineShapes(t *testing.T) {
	t.Parallel()
	pairs := []struct{ engine, api any }{
		{engine.TaskFilter{}, apitype.TaskFilter{}},
		{engine.TaskPage{}, apitype.TaskPage{}},
		{engine.CreateTaskInput{}, apitype.CreateTaskInput{}},
		{engine.DamagedRecord{}, apitype.DamagedRecord{}},
		{engine.Quarantined{}, apitype.Quarantined{}},
		{engine.FlowFilter{}, apitype.FlowFilter{}},
		{engine.FlowView{}, apitype.FlowView{}},
		{engine.FlowViewPage{}, apitype.FlowViewPage{}},
		{engine.Chain{}, apitype.Chain{}},
		{engine.FlowCounts{}, apitype.FlowCounts{}},
		{engine.CreateFlowInput{}, apitype.CreateFlowInput{}},
		{engine.FlowPatch{}, apitype.FlowPatch{}},
		{engine.CancelResult{}, apitype.CancelResult{}},
		{engine.RetryResult{}, apitype.RetryResult{}},
		{engine.GateFilter{}, apitype.GateFilter{}},
		{engine.OpenGate{}, apitype.OpenGate{}},
		{engine.GateDecision{}, apitype.GateDecision{}},
		{engine.HistoryEntry{}, apitype.HistoryEntry{}},
		{engine.HistoryPage{}, apitype.HistoryPage{}},
	}
	for _, p := range pairs {
		et, at := reflect.TypeOf(p.engine), reflect.TypeOf(p.api)
		require.Equal(t, fieldsOf(et), fieldsOf(at), "apitype.%s has the fields of engine.%s", at.Name(), et.Name())
	}
}

// fieldsOf lists t's fields as name, tag and the name of their type.
func fieldsOf(t reflect.Type) []string {
	out := make([]string, t.NumField())
	for i := range out {
		f := t.Field(i)
		out[i] = f.Name + " `" + string(f.Tag) + "` " + reflect.Indirect(reflect.New(f.Type)).Type().String()
	}
	for i, s := range out {
		// The types differ only in their package: engine.X is apitype.X.
		out[i] = strings.ReplaceAll(s, "engine.", "apitype.")
	}
	return out
}

// Each conversion that copies field by field copies every field: each
// engine field set alone arrives set.
func TestConversionsCopyEveryField(t *testing.T) {
	t.Parallel()
	check := func(zero any, convert func(v reflect.Value) any) {
		typ := reflect.TypeOf(zero)
		for i := range typ.NumField() {
			v := reflect.New(typ).Elem()
			setNonZero(v.Field(i))
			got := reflect.ValueOf(convert(v))
			name := typ.Field(i).Name
			require.False(t, got.FieldByName(name).IsZero(), "%s.%s is copied", typ.Name(), name)
		}
	}
	check(engine.FlowView{}, func(v reflect.Value) any { return flowViewOf(v.Interface().(engine.FlowView)) })
	check(engine.FlowViewPage{}, func(v reflect.Value) any { return flowViewPageOf(v.Interface().(engine.FlowViewPage)) })
	check(engine.TaskPage{}, func(v reflect.Value) any { return taskPageOf(v.Interface().(engine.TaskPage)) })
	check(engine.HistoryEntry{}, func(v reflect.Value) any { return historyEntryOf(v.Interface().(engine.HistoryEntry)) })
	check(engine.HistoryPage{}, func(v reflect.Value) any { return historyPageOf(v.Interface().(engine.HistoryPage)) })
}

// setNonZero gives v a value other than its zero: a new pointer, a slice
// or map of one element, a non-empty string, a one, true, a time, or a
// struct with its first field set.
func setNonZero(v reflect.Value) {
	if v.Type() == reflect.TypeFor[time.Time]() {
		v.Set(reflect.ValueOf(time.Unix(1, 0)))
		return
	}
	switch v.Kind() {
	case reflect.Pointer:
		v.Set(reflect.New(v.Type().Elem()))
	case reflect.Slice:
		v.Set(reflect.MakeSlice(v.Type(), 1, 1))
	case reflect.Map:
		v.Set(reflect.MakeMap(v.Type()))
		v.SetMapIndex(reflect.New(v.Type().Key()).Elem(), reflect.New(v.Type().Elem()).Elem())
	case reflect.String:
		v.SetString("x")
	case reflect.Int, reflect.Int64, reflect.Int32:
		v.SetInt(1)
	case reflect.Float64:
		v.SetFloat(1)
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				setNonZero(v.Field(i))
				return
			}
		}
	}
}
