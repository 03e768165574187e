package engine_test

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/engine"
	"github.com/flowgate/flowgate/host/store"
)

func TestRecordsRoundTrip(t *testing.T) {
	t.Parallel()
	eng := newEngine(t)
	require.NoError(t, eng.UpdateRecords(engine.CronRecords, func(tx engine.RecordTx) error {
		if err := tx.Put("cron/job/a", []byte("A")); err != nil {
			return err
		}
		if err := tx.Put("cron/job/b", []byte("B")); err != nil {
			return err
		}
		return tx.Delete("cron/job/missing")
	}))
	var keys []string
	require.NoError(t, eng.ViewRecords(engine.CronRecords, func(tx engine.RecordReadTx) error {
		it, err := tx.Get("cron/job/a")
		require.NoError(t, err)
		require.Equal(t, "A", string(it.Value))
		keys = keys[:0]
		return tx.Scan("cron/job/", store.ScanOptions{}, func(it store.Item) bool {
			keys = append(keys, it.Key)
			return true
		})
	}))
	require.Equal(t, []string{"cron/job/a", "cron/job/b"}, keys)
	require.NoError(t, eng.UpdateRecords(engine.CronRecords, func(tx engine.RecordTx) error { return tx.Delete("cron/job/a") }))
	require.NoError(t, eng.ViewRecords(engine.CronRecords, func(tx engine.RecordReadTx) error {
		_, err := tx.Get("cron/job/a")
		require.ErrorIs(t, err, store.ErrKeyNotFound)
		return nil
	}))
}

func TestRecordsStayInTheirNamespace(t *testing.T) {
	t.Parallel()
	eng := newEngine(t)
	f := createFlow(t, eng)

	err := eng.UpdateRecords("flow/", func(engine.RecordTx) error { return nil })
	require.ErrorContains(t, err, `record namespace "flow/" is not one the engine lends`)
	err = eng.ViewRecords("", func(engine.RecordReadTx) error { return nil })
	require.ErrorContains(t, err, `record namespace "" is not one the engine lends`)

	for name, op := range map[string]func(engine.RecordTx) error{
		"put":    func(tx engine.RecordTx) error { return tx.Put("flow/"+f.ID, []byte("{}")) },
		"delete": func(tx engine.RecordTx) error { return tx.Delete("flow/" + f.ID) },
		"get":    func(tx engine.RecordTx) error { _, err := tx.Get("flow/" + f.ID); return err },
		"scan": func(tx engine.RecordTx) error {
			return tx.Scan("", store.ScanOptions{}, func(store.Item) bool { return true })
		},
	} {
		err := eng.UpdateRecords(engine.CronRecords, op)
		require.ErrorContains(t, err, `outside the record namespace "cron/"`, name)
	}
	got, err := eng.GetFlow(f.ID)
	require.NoError(t, err)
	require.Equal(t, f.Revision, got.Revision, "the flow is untouched")
}

func TestRecordsRefusalAndRollback(t *testing.T) {
	t.Parallel()
	eng := newEngine(t)
	refused := errors.New("job name taken")
	err := eng.UpdateRecords(engine.CronRecords, func(tx engine.RecordTx) error {
		if _, err := tx.Get("cron/name/x"); !errors.Is(err, store.ErrKeyNotFound) {
			return err
		}
		return refused
	})
	require.ErrorIs(t, err, refused, "a refusal before any write is returned as is")

	failed := errors.New("encode failed")
	err = eng.UpdateRecords(engine.CronRecords, func(tx engine.RecordTx) error {
		if err := tx.Put("cron/job/half", []byte("1")); err != nil {
			return err
		}
		return failed
	})
	require.ErrorIs(t, err, failed)
	require.NoError(t, eng.ViewRecords(engine.CronRecords, func(tx engine.RecordReadTx) error {
		_, err := tx.Get("cron/job/half")
		require.ErrorIs(t, err, store.ErrKeyNotFound, "an error after a write rolls the write back")
		return nil
	}))
}

// A fenced write needs a store that can fence: on bbolt, served by one
// process, it is refused with what fences are for; on etcd a fence that
// does not hold (no such key) stops it, and nothing is written.
func TestRecordsFenced(t *testing.T) {
	t.Parallel()
	eng := newEngine(t)
	err := eng.UpdateRecordsFenced(store.Fence{Key: "no-such-leader", Revision: 1}, engine.CronRecords, func(tx engine.RecordTx) error {
		return tx.Put(engine.CronRecords+"job/1", []byte("fired"))
	})
	if etcdServer == nil {
		require.ErrorContains(t, err, "cannot fence a write; fences are for a store shared by several processes")
	} else {
		require.ErrorIs(t, err, store.ErrFenced)
	}
	require.NoError(t, eng.ViewRecords(engine.CronRecords, func(tx engine.RecordReadTx) error {
		_, err := tx.Get(engine.CronRecords + "job/1")
		require.ErrorIs(t, err, store.ErrKeyNotFound, "a refused fenced write wrote")
		return nil
	}))
}
