package api

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/api/apitype"
	"github.com/flowgate/flowgate/host/audit"
	"github.com/flowgate/flowgate/host/pluginhost"
	"github.com/flowgate/flowgate/host/schedule"
	"github.com/flowgate/flowgate/host/scheduler"
	"github.com/flowgate/flowgate/host/store"
	"github.com/flowgate/flowgate/host/trigger"
)

// The cron, trigger, plugin, audit and write-health words keep the shapes
// of the types they stand for: the same fields, in the same order, with
// the same JSON tags and kinds. A field added to scheduler.Job (or any
// type below) fails here until its apitype twin has it too.
func TestCronAndOtherAPITypesHaveTheirShapes(t *testing.T) {
	t.Parallel()
	pairs := []struct{ from, api any }{
		{scheduler.Job{}, apitype.CronJob{}},
		{scheduler.JobSchedule{}, apitype.CronSchedule{}},
		{scheduler.Payload{}, apitype.CronPayload{}},
		{scheduler.Delivery{}, apitype.CronDelivery{}},
		{scheduler.FailureAlert{}, apitype.CronFailureAlert{}},
		{scheduler.JobState{}, apitype.CronJobState{}},
		{scheduler.Toggle{}, apitype.CronToggle{}},
		{scheduler.JobInput{}, apitype.CronJobInput{}},
		{schedule.Flags{}, apitype.ScheduleFlags{}},
		{scheduler.JobPatch{}, apitype.CronJobPatch{}},
		{scheduler.BackfillOptions{}, apitype.BackfillOptions{}},
		{scheduler.JobStatus{}, apitype.CronJobStatus{}},
		{scheduler.Run{}, apitype.CronRun{}},
		{scheduler.GateWait{}, apitype.GateWait{}},
		{schedule.FlagError{}, apitype.FlagError{}},
		{trigger.Trigger{}, apitype.Trigger{}},
		{trigger.Toggle{}, apitype.TriggerToggle{}},
		{trigger.Input{}, apitype.TriggerInput{}},
		{trigger.Run{}, apitype.TriggerRun{}},
		{pluginhost.Status{}, apitype.PluginStatus{}},
		{audit.Report{}, apitype.AuditReport{}},
		{audit.Finding{}, apitype.AuditFinding{}},
		{audit.Summary{}, apitype.AuditSummary{}},
		{audit.Counts{}, apitype.AuditCounts{}},
		{audit.Combined{}, apitype.AuditCombined{}},
		{audit.Skip{}, apitype.AuditSkip{}},
		{store.WriteHealth{}, apitype.WriteHealth{}},
	}
	for _, p := range pairs {
		ft, at := reflect.TypeOf(p.from), reflect.TypeOf(p.api)
		require.Equal(t, shapeOf(ft), shapeOf(at), "apitype.%s has the fields of %s", at.Name(), ft)
	}
}

// shapeOf lists t's fields as name (or "embedded"), tag and kind. The
// types differ in name (scheduler.JobSchedule is apitype.CronSchedule),
// so a field of a struct type reads "struct": each such pair is compared
// on its own above.
func shapeOf(t reflect.Type) []string {
	out := make([]string, t.NumField())
	for i := range out {
		f := t.Field(i)
		name := f.Name
		if f.Anonymous {
			name = "embedded"
		}
		out[i] = name + " `" + string(f.Tag) + "` " + kindOf(f.Type)
	}
	return out
}

func kindOf(t reflect.Type) string {
	switch {
	case t == reflect.TypeFor[time.Time](), t == reflect.TypeFor[json.RawMessage](), sharedType(t):
		return t.String()
	}
	switch t.Kind() {
	case reflect.Pointer:
		return "*" + kindOf(t.Elem())
	case reflect.Slice:
		return "[]" + kindOf(t.Elem())
	case reflect.Map:
		return "map[" + kindOf(t.Key()) + "]" + kindOf(t.Elem())
	}
	return t.Kind().String()
}

// sharedType reports whether t is a type both sides use as it is: sdk's
// and stored's records.
func sharedType(t reflect.Type) bool {
	p := t.PkgPath()
	return p == "github.com/flowgate/flowgate/sdk" || p == "github.com/flowgate/flowgate/host/stored"
}

// Every conversion copies every field, at every depth: a value with each
// field set encodes to the same JSON after it is converted.
func TestCronAndOtherConversionsCopyEveryField(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name    string
		from    any
		convert func(v any) any
	}{
		{"job", scheduler.Job{}, func(v any) any { return cronJobOf(v.(scheduler.Job)) }},
		{"job status", scheduler.JobStatus{}, func(v any) any { return cronJobStatusOf(v.(scheduler.JobStatus)) }},
		{"run", scheduler.Run{}, func(v any) any { return cronRunOf(v.(scheduler.Run)) }},
		{"job input", apitype.CronJobInput{}, func(v any) any { return cronJobInputOf(v.(apitype.CronJobInput)) }},
		{"job patch", apitype.CronJobPatch{}, func(v any) any { return scheduler.JobPatch(v.(apitype.CronJobPatch)) }},
		{"backfill", apitype.BackfillOptions{}, func(v any) any { return backfillOptionsOf(v.(apitype.BackfillOptions)) }},
		{"trigger", trigger.Trigger{}, func(v any) any { return triggerOf(v.(trigger.Trigger)) }},
		{"trigger input", apitype.TriggerInput{}, func(v any) any { return trigger.Input(v.(apitype.TriggerInput)) }},
		{"trigger runs", []trigger.Run{}, func(v any) any { return triggerRunsOf(v.([]trigger.Run)) }},
		{"plugin", pluginhost.Status{}, func(v any) any { return PluginStatusOf(v.(pluginhost.Status)) }},
		{"audit", audit.Report{}, func(v any) any { return AuditReportOf(v.(audit.Report)) }},
		{"write health", store.WriteHealth{}, func(v any) any { return *WriteHealthOf(v.(store.WriteHealth)) }},
	}
	for _, c := range cases {
		v := reflect.New(reflect.TypeOf(c.from)).Elem()
		fillAll(v)
		want, err := json.Marshal(v.Interface())
		require.NoError(t, err, c.name)
		got, err := json.Marshal(c.convert(v.Interface()))
		require.NoError(t, err, c.name)
		require.Equal(t, string(want), string(got), "%s: every field is copied", c.name)
	}
}

// fillAll sets every exported field of v, at every depth, to a value
// other than its zero. sdk and stored records are shared, not converted,
// so they are only made non-nil.
func fillAll(v reflect.Value) {
	switch {
	case v.Type() == reflect.TypeFor[time.Time]():
		v.Set(reflect.ValueOf(time.Date(2026, 12, 2, 15, 4, 5, 0, time.UTC)))
		return
	case v.Type() == reflect.TypeFor[json.RawMessage]():
		v.Set(reflect.ValueOf(json.RawMessage(`{"a":1}`)))
		return
	case sharedType(v.Type()):
		return
	}
	switch v.Kind() {
	case reflect.Pointer:
		v.Set(reflect.New(v.Type().Elem()))
		fillAll(v.Elem())
	case reflect.Slice:
		v.Set(reflect.MakeSlice(v.Type(), 1, 1))
		fillAll(v.Index(0))
	case reflect.Map:
		k, e := reflect.New(v.Type().Key()).Elem(), reflect.New(v.Type().Elem()).Elem()
		fillAll(k)
		fillAll(e)
		v.Set(reflect.MakeMap(v.Type()))
		v.SetMapIndex(k, e)
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				fillAll(v.Field(i))
			}
		}
	default:
		setNonZero(v)
	}
}
