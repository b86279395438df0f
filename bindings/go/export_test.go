package mcpstdio

// The sizes of a batch (batch.go), for the external tests.
const (
	BatchMax  = batchMax
	StageSize = stageSize
	MinArena  = minArena
)
