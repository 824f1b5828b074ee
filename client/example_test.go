package client_test

import (
	"context"
	"fmt"
	"log"

	"github.com/rankwire/rankwire/client"
)

// Submitting scores with idempotency ids, then reading the top.
func Example() {
	ctx := context.Background()
	c, err := client.New([]string{"https://rank-1.example.com", "https://rank-2.example.com"}, client.WithToken("eyJ..."))
	if err != nil {
		log.Fatal(err)
	}
	res, err := c.Submit(ctx, "weekly",
		client.Score{Member: "p42", Score: 4500, ID: "round-7-p42"},
		client.Score{Member: "p7", Score: 9800, ID: "round-7-p7"})
	if client.IsCode(err, "rate_limited") {
		return // back off and retry with the same ids: they apply once
	}
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("p42 is now rank", res[0].Rank)
	page, err := c.Top(ctx, "weekly", client.ReadOptions{Limit: 10})
	if err != nil {
		log.Fatal(err)
	}
	for _, r := range page.Rows {
		fmt.Println(r.Rank, r.Name, r.Score)
	}
}

// Following a player's neighbourhood live, across gateway restarts.
func ExampleClient_Watch() {
	ctx := context.Background()
	c, err := client.New([]string{"https://rank.example.com"}, client.WithToken("eyJ..."))
	if err != nil {
		log.Fatal(err)
	}
	for state, err := range c.Watch(ctx, "weekly", client.Around("p42", 3)) {
		if err != nil {
			log.Fatal(err) // refused: the board, the token or the view
		}
		for _, r := range state.Rows {
			fmt.Println(r.Rank, r.Member, r.Score)
		}
	}
}

// Paging through a board with cursors: rows moving above the cursor do not
// shift the next page.
func ExampleClient_Top() {
	ctx := context.Background()
	c, err := client.New([]string{"https://rank.example.com"}, client.WithToken("eyJ..."))
	if err != nil {
		log.Fatal(err)
	}
	opts := client.ReadOptions{Limit: 1000}
	for {
		page, err := c.Top(ctx, "weekly", opts)
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(len(page.Rows), "rows")
		if page.Next == "" {
			break
		}
		opts.After = page.Next
	}
}
