package mcpstdio

// The sizes of a batch (batch.go), for the external tests.
const (
	BatchMax  = batchMax
	ArenaSize = arenaSize
	BigItem   = bigItem
)
