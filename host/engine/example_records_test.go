package engine_test

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/flowgate/flowgate/host/engine"
	"github.com/flowgate/flowgate/host/store"
)

// A part with records of its own writes them in its namespace; a key
// outside it is refused.
func ExampleEngine_UpdateRecords() {
	dir, _ := os.MkdirTemp("", "records")
	defer os.RemoveAll(dir)
	st, err := store.Open(filepath.Join(dir, "flowgate.db"), store.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer st.Close()
	eng, err := engine.New(st, engine.Config{})
	if err != nil {
		fmt.Println(err)
		return
	}
	err = eng.UpdateRecords(engine.CronRecords, func(tx engine.RecordTx) error {
		return tx.Put("cron/job/nightly", []byte(`{"name":"nightly"}`))
	})
	fmt.Println(err)
	err = eng.UpdateRecords(engine.CronRecords, func(tx engine.RecordTx) error {
		return tx.Put("flow/f1", []byte(`{}`))
	})
	fmt.Println(err)
	// Output:
	// <nil>
	// engine: key "flow/f1" is outside the record namespace "cron/"; this transaction reads and writes only keys that start with it
}
