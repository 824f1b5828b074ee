package connguard

// MinReserve is the least number of file descriptors DefaultBudget leaves
// for everything that is not a client connection: the JetStream store's
// files, snapshots, the NATS connection, listeners, logs.
const MinReserve = 128

// fallbackBudget is the budget where the descriptor limit is unknown.
const fallbackBudget = 4096

// DefaultBudget returns the connection budget for this process: its file
// descriptor limit less a reserve of a tenth of it, at least MinReserve; at
// least 16; 4096 where the limit cannot be read. At 1,024 descriptors that
// is 896 connections.
func DefaultBudget() int {
	return budgetFor(limit())
}

func budgetFor(n int) int {
	if n <= 0 {
		return fallbackBudget
	}
	return max(n-max(n/10, MinReserve), 16)
}
