package board_test

import (
	"fmt"

	"github.com/rankwire/rankwire/board"
)

func Example() {
	b, _ := board.New(board.Config{Policy: board.Best})
	b.Submit(board.Submission{Member: 1, Score: 4500, Seq: 1})
	b.Submit(board.Submission{Member: 2, Score: 9800, Seq: 2})
	b.Submit(board.Submission{Member: 3, Score: 7000, Seq: 3})
	c, _ := b.Submit(board.Submission{Member: 1, Score: 9900, Seq: 4})
	fmt.Printf("member 1 moved from rank %d to rank %d\n", c.OldRank, c.NewRank)
	for _, r := range b.Range(0, 10, nil) {
		fmt.Println(r.Rank, r.Member, r.Score)
	}
	// Output:
	// member 1 moved from rank 3 to rank 1
	// 1 1 9900
	// 2 2 9800
	// 3 3 7000
}

func ExampleBoard_Around() {
	b, _ := board.New(board.Config{Order: board.Asc}) // lower is better: a speedrun
	for m := uint32(1); m <= 9; m++ {
		b.Submit(board.Submission{Member: m, Score: float64(60 + m), Seq: uint64(m)})
	}
	rows, _ := b.Around(5, 1, nil)
	for _, r := range rows {
		fmt.Println(r.Rank, r.Member, r.Score)
	}
	// Output:
	// 4 4 64
	// 5 5 65
	// 6 6 66
}

func ExampleBoard_CountBetter() {
	b, _ := board.New(board.Config{})
	for m := uint32(1); m <= 100; m++ {
		b.Submit(board.Submission{Member: m, Score: float64(m), Seq: uint64(m)})
	}
	fmt.Println("a score of 90.5 would rank", b.CountBetter(90.5, 0)+1)
	// Output: a score of 90.5 would rank 11
}

func ExampleDecode() {
	b, _ := board.New(board.Config{Policy: board.Sum})
	b.Submit(board.Submission{Member: 7, Score: 3, Seq: 1})
	b.Submit(board.Submission{Member: 7, Score: 4, Seq: 2})
	snap, _ := b.MarshalBinary()
	restored, err := board.Decode(snap, board.Config{})
	if err != nil {
		panic(err)
	}
	r, _ := restored.Get(7)
	fmt.Println(restored.Config().Policy, r.Rank, r.Score)
	// Output: sum 1 7
}
