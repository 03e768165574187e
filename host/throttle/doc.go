// Package throttle slows down the gateway's loops while they keep failing,
// so that a fault that does not go away (a full disk, above all) costs a
// few writes and a few log lines a minute instead of every core and
// thousands of lines a second.
//
// # Backoff
//
// A Backoff is shared by the goroutines of one loop. Each failure doubles
// the hold, from Base up to Max; while it holds, Wait says how long is
// left and the loop does nothing; the first success clears it. The loops
// hold on store write failures (store.ErrWriteFailed): their next attempt
// is the probe that finds the disk writable again, so no restart is ever
// needed.
//
// # Log
//
// A Log keeps a repeated message to one line per Every: the first
// occurrence is logged, the following ones are counted, and the first one
// after Every is logged with "(repeated N times in the last D)".
package throttle
