// Package layering holds no code: its test enforces the import rules of
// docs/ARCHITECTURE.md, so that board and identity stay standard-library only and no
// package reaches above its row of the table.
package layering
