package trigger

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/flowgate/flowgate/flows"
	"github.com/flowgate/flowgate/host/engine"
	"github.com/flowgate/flowgate/host/store"
	"github.com/flowgate/flowgate/sdk"
)

// OwnerKey is the owner of every flow trigger name starts.
func OwnerKey(name string) string { return "trigger:" + name }

// Accept starts the flow of one delivery of t, whose input is a JSON
// value (the body, or the query as an object of strings), unless the
// delivery id was seen before: then it returns the flow that delivery
// started, with created false. The flow, the delivery id and the run
// record are written in one transaction. Input a pipeline cannot take is
// refused with an error matching sdk.ErrInvalid, before anything is
// written.
func (ts *Triggers) Accept(t Trigger, delivery string, input json.RawMessage) (f *sdk.Flow, created bool, err error) {
	in := engine.CreateFlowInput{OwnerKey: OwnerKey(t.Name), Goal: "trigger " + t.Name, Origin: "trigger:" + t.Name + ":" + delivery}
	switch t.Target {
	case TargetPipeline:
		args, err := pipelineArgs(t.Pipeline, input)
		if err != nil {
			return nil, false, err
		}
		in.ControllerID = flows.PipelineController
		in.State, err = flows.Invocation{File: t.Pipeline, Args: args, Cwd: filepath.Dir(t.Pipeline),
			Env: map[string]string{"FLOWGATE_TRIGGER": t.Name, "FLOWGATE_TRIGGER_DELIVERY": delivery}}.State()
		if err != nil {
			return nil, false, err
		}
	case TargetController:
		in.ControllerID, in.State = t.Controller, input
	default:
		return nil, false, fmt.Errorf("trigger %s: unknown target %q", t.Name, t.Target)
	}
	at := ts.now().UTC()
	return ts.eng.CreateFlowOnce(engine.TriggerRecords, seenKey(t.Name, delivery), in, func(tx engine.RecordTx, f *sdk.Flow) error {
		b, _ := json.Marshal(Run{Trigger: t.Name, Delivery: delivery, FlowID: f.ID, At: at})
		if err := tx.Put(runKey(t.Name, at, f.ID), b); err != nil {
			return err
		}
		return forget(tx, t.Name, at.Add(-Remember))
	})
}

// Remember is how long a trigger remembers a delivery: a delivery id sent
// again within it answers with its first flow; after it, it starts a new
// one. Senders retry within hours (GitHub's redeliveries are offered for
// three days), so a month is ample, and it bounds the records a busy
// trigger keeps.
const Remember = 30 * 24 * time.Hour

// forgetPerDelivery is how many deliveries older than Remember each new
// delivery forgets: more than one, so forgetting outpaces arriving.
const forgetPerDelivery = 2

// forget deletes the run and delivery id records of up to
// forgetPerDelivery of name's oldest deliveries accepted before cutoff.
func forget(tx engine.RecordTx, name string, cutoff time.Time) error {
	var old []Run
	var keys []string
	err := tx.Scan(runsOf(name), store.ScanOptions{Limit: forgetPerDelivery}, func(it store.Item) bool {
		var r Run
		if json.Unmarshal(it.Value, &r) != nil || !r.At.Before(cutoff) {
			return false
		}
		old, keys = append(old, r), append(keys, it.Key)
		return true
	})
	if err != nil {
		return err
	}
	for i, r := range old {
		if err := tx.Delete(keys[i]); err != nil {
			return err
		}
		if err := tx.Delete(seenKey(name, r.Delivery)); err != nil {
			return err
		}
	}
	return nil
}

// pipelineArgs checks input against the args the workflow file declares:
// it must be a JSON object, and it must give every declared arg that has
// no default. The file is read at each delivery, so an edit to it applies
// to the next one.
func pipelineArgs(file string, input json.RawMessage) (json.RawMessage, error) {
	wf, err := flows.Load(file)
	if err != nil {
		return nil, fmt.Errorf("the trigger's workflow file: %w", err)
	}
	provided, err := flows.ParseArgsJSON(string(input))
	if err != nil {
		return nil, fmt.Errorf("%w: the delivery is the workflow's args: %v", sdk.ErrInvalid, err)
	}
	var missing []string
	for _, a := range wf.Args {
		if _, ok := provided[a.Name]; !ok && !a.HasDefault {
			missing = append(missing, a.Name)
		}
	}
	if len(missing) > 0 {
		sort.Strings(missing)
		return nil, fmt.Errorf("%w: the workflow's args %s have no default and the delivery does not give them", sdk.ErrInvalid, strings.Join(missing, ", "))
	}
	return json.Marshal(flows.ResolveArgs(wf, provided))
}
