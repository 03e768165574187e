package sdk

// WatchParent is watchParent.
var WatchParent = watchParent
