package identity_test

import (
	"errors"
	"fmt"
	"strings"

	"github.com/rankwire/rankwire/identity"
)

// A tenant's members get dense handles in first-seen order; linking an alias
// that belongs to someone else merges that someone into the member.
func Example() {
	var ix identity.Index
	ann, _ := ix.Intern("ann")
	dev, _ := ix.Intern("device:42") // first seen as a member of its own
	fmt.Println(ann, dev)

	res, _ := ix.Link("ann", []string{"email:ann@x.io", "device:42"})
	fmt.Printf("handle %d, merges %+v\n", res.Handle, res.Merges)

	h, _ := ix.Resolve("device:42")
	name, _ := ix.Name(h)
	fmt.Println(name, ix.Aliases(h), ix.Len())
	// Output:
	// 1 2
	// handle 1, merges [{From:2 Into:1}]
	// ann [device:42 email:ann@x.io] 1
}

func ExampleIndex_Intern() {
	ix := identity.New()
	for _, id := range []string{"p42", "p7", "p42"} {
		h, _ := ix.Intern(id)
		fmt.Println(id, h)
	}
	_, err := ix.Intern("p\n")
	fmt.Println(errors.Is(err, identity.ErrInvalid))
	// Output:
	// p42 1
	// p7 2
	// p42 1
	// true
}

func ExampleIndex_Link() {
	ix := identity.New()
	ix.Link("u1", []string{"email:a@x.io"})
	ix.Link("u2", []string{"device:7"})

	// email:a@x.io stands for u1, so device:7 joins u1 and u2 collapses into it.
	res, _ := ix.Link("email:a@x.io", []string{"device:7"})
	fmt.Println(res.Handle, res.Merges)
	fmt.Println(ix.Aliases(res.Handle))
	// Output:
	// 1 [{2 1}]
	// [device:7 email:a@x.io u2]
}

func ExampleIndex_Resolve() {
	ix := identity.New()
	ix.Link("u1", []string{"email:a@x.io"})
	for _, s := range []string{"u1", "email:a@x.io", "u2"} {
		h, ok := ix.Resolve(s)
		fmt.Println(s, h, ok)
	}
	// Output:
	// u1 1 true
	// email:a@x.io 1 true
	// u2 0 false
}

func ExampleIndex_Canonical() {
	ix := identity.New()
	ix.Intern("u1")
	ix.Link("u2", []string{"u1"}) // u1 (1) collapses into u2 (2)
	ix.Link("u3", []string{"u2"}) // u2 collapses into u3 (3)
	for h := uint32(0); h <= 3; h++ {
		c, ok := ix.Canonical(h)
		_, live := ix.Name(h)
		fmt.Println(h, c, ok, live)
	}
	// Output:
	// 0 0 false false
	// 1 3 true false
	// 2 3 true false
	// 3 3 true true
}

func ExampleIndex_Compare() {
	ix := identity.New()
	b, _ := ix.Intern("bob")
	a, _ := ix.Intern("alice")
	fmt.Println(ix.Compare(a, b), ix.Compare(b, a), ix.Compare(a, a))
	// Output: -1 1 0
}

func ExampleDecode() {
	ix := identity.New()
	ix.Link("u1", []string{"email:a@x.io"})
	data, _ := ix.MarshalBinary()

	copy2, err := identity.Decode(data)
	fmt.Println(err)
	h, _ := copy2.Resolve("email:a@x.io")
	fmt.Println(h)

	data[len(data)-1] ^= 0xff
	_, err = identity.Decode(data)
	fmt.Println(errors.Is(err, identity.ErrCorrupt))
	// Output:
	// <nil>
	// 1
	// true
}

func ExampleValidate() {
	for _, s := range []string{"email:ann@x.io", "", strings.Repeat("x", 129), "tab\there", "\xff"} {
		fmt.Println(identity.Validate(s))
	}
	// Output:
	// <nil>
	// identity: empty identifier
	// identity: identifier longer than 128 bytes: "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"... (129 bytes)
	// identity: identifier is not valid UTF-8 or holds a control character: "tab\there"
	// identity: identifier is not valid UTF-8 or holds a control character: "\xff"
}

func ExampleIndex_Aliases() {
	ix := identity.New()
	h, _ := ix.Intern("u1")
	ix.Link("u1", []string{"phone:+4412", "email:a@x.io"})
	fmt.Println(ix.Aliases(h))
	fmt.Println(ix.Aliases(99) == nil)
	// Output:
	// [email:a@x.io phone:+4412]
	// true
}
