package engine

import (
	"errors"
	"fmt"

	"github.com/flowgate/flowgate/host/store"
	"github.com/flowgate/flowgate/sdk"
)

// CreateFlowOnce creates a flow unless the record at key (inside the
// record namespace ns) already names one, and then returns that flow with
// created false. The record is written with the flow, in one transaction,
// so a caller that retries after a crash finds the flow its first attempt
// made, or finds nothing made. On a store shared by several gateways the
// read of the absent key is compared at commit, so two gateways racing on
// one key create one flow between them. also, when not nil, writes more
// records of ns naming the new flow in the same transaction; it only
// writes (a refusal must come from the caller before the call).
func (e *Engine) CreateFlowOnce(ns, key string, in CreateFlowInput, also func(RecordTx, *sdk.Flow) error) (f *sdk.Flow, created bool, err error) {
	if err := checkNamespace(ns); err != nil {
		return nil, false, err
	}
	if err := inside(ns, key); err != nil {
		return nil, false, err
	}
	if err := in.normalize(); err != nil {
		return nil, false, err
	}
	err = e.write(func(t *txn) error {
		f, created = nil, false
		it, err := t.tx.Get(key)
		switch {
		case err == nil:
			f, err = loadFlow(t.tx, string(it.Value))
			if err != nil {
				return fmt.Errorf("the record %s names flow %s: %w", key, it.Value, err)
			}
			return nil
		case !errors.Is(err, store.ErrKeyNotFound):
			return err
		}
		if f, err = e.createFlow(t, in, nil); err != nil {
			return err
		}
		if err := t.putRaw(key, []byte(f.ID)); err != nil {
			return err
		}
		created = true
		if also == nil {
			return nil
		}
		return also(recordTx{t: t, ns: ns}, f)
	})
	if err != nil {
		return nil, false, err
	}
	return f, created, nil
}
