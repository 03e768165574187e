// Package home locates and prepares flowgate's home directory: the folder
// that holds the store file, task logs and the gateway socket.
//
// The home is --home if given, else $FLOWGATE_HOME, else ~/.flowgate. It is
// created with mode 0700; the store file inside it is flowgate.db.
package home
