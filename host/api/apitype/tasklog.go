package apitype

// LogQuery picks a piece of a task's log: Stream is "stdout" (when
// empty) or "stderr", Attempt the attempt (0: the latest), Offset the
// byte to start at. It travels as a URL query, so it has no JSON tags.
type LogQuery struct {
	Stream  string
	Attempt int
	Offset  int64
}

// LogChunk is a piece of a task's log: up to 64 KiB of Text from the
// offset asked, the size of the whole file, and the attempt it is of.
type LogChunk struct {
	Text    string `json:"text"`
	Size    int64  `json:"size"`
	Attempt int    `json:"attempt"`
}
