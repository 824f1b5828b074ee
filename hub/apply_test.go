package hub

import (
	"slices"
	"testing"
)

func TestPolicies(t *testing.T) {
	h := startHub(t, Config{})
	subs := []Item{{Member: "a", Score: 10}, {Member: "b", Score: 20}, {Member: "a", Score: 5}, {Member: "a", Score: 30}}
	cases := []struct {
		board   string
		set     Settings
		want    []string
		applied []bool
	}{
		{"best", Settings{}, []string{"a:30", "b:20"}, []bool{true, true, false, true}},
		{"best-asc", Settings{Order: "asc"}, []string{"a:5", "b:20"}, []bool{true, true, true, false}},
		{"latest", Settings{Policy: "latest"}, []string{"a:30", "b:20"}, []bool{true, true, true, true}},
		{"sum", Settings{Policy: "sum"}, []string{"a:45", "b:20"}, []bool{true, true, true, true}},
		{"first", Settings{Policy: "first"}, []string{"b:20", "a:10"}, []bool{true, true, false, false}},
	}
	for _, c := range cases {
		t.Run(c.board, func(t *testing.T) {
			mustPut(t, h, "t1", c.board, c.set)
			var applied []bool
			for _, it := range subs {
				applied = append(applied, mustSubmit(t, h, "t1", c.board, it)[0].Applied)
			}
			if got := top(t, h, Loc{Tenant: "t1", Board: c.board}); !slices.Equal(got, c.want) {
				t.Errorf("top = %v, want %v", got, c.want)
			}
			if !slices.Equal(applied, c.applied) {
				t.Errorf("applied = %v, want %v", applied, c.applied)
			}
		})
	}
}

func TestSubmitResults(t *testing.T) {
	h := startHub(t, Config{})
	mustPut(t, h, "t1", "b", Settings{})
	res := mustSubmit(t, h, "t1", "b", Item{Member: "a", Score: 1}, Item{Member: "b", Score: 2}, Item{Member: "c", Score: 2})
	want := []Result{
		{Member: "a", Score: 1, Rank: 1, Applied: true, Seq: 1},
		{Member: "b", Score: 2, Rank: 1, Applied: true, Seq: 2},
		{Member: "c", Score: 2, Rank: 2, Applied: true, Seq: 3}, // same seq as b: member id decides
	}
	if !slices.Equal(res, want) {
		t.Fatalf("results\n got %+v\nwant %+v", res, want)
	}
	p, err := h.Member(Loc{Tenant: "t1", Board: "b"}, "a")
	if err != nil || p.Rows[0].Rank != 3 || p.Total != 3 || p.Seq != 3 {
		t.Fatalf("Member a = %+v, %v", p, err)
	}
	p, _ = h.Around(Loc{Tenant: "t1", Board: "b"}, "c", 1)
	if len(p.Rows) != 3 {
		t.Fatalf("Around = %+v", p)
	}
	p, _ = h.AtRank(Loc{Tenant: "t1", Board: "b"}, 2)
	if p.Rows[0].Member != "c" {
		t.Fatalf("AtRank 2 = %+v", p)
	}
	_, err = h.AtRank(Loc{Tenant: "t1", Board: "b"}, 4)
	wantErr(t, err, ErrNotFound)
	p, _ = h.Members(Loc{Tenant: "t1", Board: "b"}, []string{"a", "zz", "b", "a"})
	if len(p.Rows) != 2 || p.Rows[0].Member != "b" || p.Rows[1].Member != "a" {
		t.Fatalf("Members = %+v", p)
	}
}

func TestBoardEvents(t *testing.T) {
	h := startHub(t, Config{})
	ctx, loc := testCtx(t), Loc{Tenant: "t1", Board: "b"}
	mustPut(t, h, "t1", "b", Settings{})
	if _, err := h.PutBoard(ctx, "t1", "b", Settings{Order: "asc"}); err != nil {
		t.Fatalf("changing the order of an empty board: %v", err)
	}
	mustSubmit(t, h, "t1", "b", Item{Member: "a", Score: 1}, Item{Member: "b", Score: 2})
	_, err := h.PutBoard(ctx, "t1", "b", Settings{Order: "desc"})
	wantErr(t, err, ErrConflict)
	info, err := h.PutBoard(ctx, "t1", "b", Settings{Order: "asc", Retention: 3})
	if err != nil || info.Settings.Retention != 3 || info.Members != 2 {
		t.Fatalf("PutBoard retention = %+v, %v", info, err)
	}
	if err := h.RemoveMember(ctx, "t1", "b", "a"); err != nil {
		t.Fatal(err)
	}
	wantErr(t, h.RemoveMember(ctx, "t1", "b", "a"), ErrNotFound)
	if got := top(t, h, loc); !slices.Equal(got, []string{"b:2"}) {
		t.Fatalf("after removal %v", got)
	}
	if err := h.Reset(ctx, "t1", "b"); err != nil {
		t.Fatal(err)
	}
	p, _ := h.Top(loc, 0, nil, 10)
	if p.Total != 0 || p.Seq != 4 {
		t.Fatalf("after reset %+v, want empty at seq 4", p)
	}
	if err := h.DeleteBoard(ctx, "t1", "b"); err != nil {
		t.Fatal(err)
	}
	_, err = h.Top(loc, 0, nil, 10)
	wantErr(t, err, ErrNotFound)
	wantErr(t, h.DeleteBoard(ctx, "t1", "b"), ErrNotFound)
	if len(h.Boards("t1")) != 0 {
		t.Fatalf("Boards = %+v", h.Boards("t1"))
	}
}

func TestLinkMergesAcrossBoards(t *testing.T) {
	h := startHub(t, Config{})
	ctx := testCtx(t)
	mustPut(t, h, "t1", "best", Settings{})
	mustPut(t, h, "t1", "sum", Settings{Policy: "sum"})
	for _, b := range []string{"best", "sum"} {
		mustSubmit(t, h, "t1", b, Item{Member: "ann", Score: 10}, Item{Member: "dev42", Score: 30}, Item{Member: "bob", Score: 20})
	}
	id, err := h.Link(ctx, "t1", "ann", []string{"email:ann@x.io", "dev42"})
	if err != nil {
		t.Fatal(err)
	}
	if id.Member != "ann" || !slices.Equal(id.Aliases, []string{"dev42", "email:ann@x.io"}) {
		t.Fatalf("Link = %+v", id)
	}
	if got := top(t, h, Loc{Tenant: "t1", Board: "best"}); !slices.Equal(got, []string{"ann:30", "bob:20"}) {
		t.Errorf("best after merge %v", got)
	}
	if got := top(t, h, Loc{Tenant: "t1", Board: "sum"}); !slices.Equal(got, []string{"ann:40", "bob:20"}) {
		t.Errorf("sum after merge %v", got)
	}
	res := mustSubmit(t, h, "t1", "sum", Item{Member: "email:ann@x.io", Score: 1})
	if res[0].Member != "ann" || res[0].Score != 41 {
		t.Errorf("submit by alias = %+v", res[0])
	}
	if got, _ := h.Identity("t1", "dev42", Reach{}); got.Member != "ann" {
		t.Errorf("Identity(dev42) = %+v", got)
	}
}
