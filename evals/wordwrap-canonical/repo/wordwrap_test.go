package wordwrap

import (
	"reflect"
	"testing"
)

func TestWrapBreaksAtSpaces(t *testing.T) {
	got := Wrap("the quick brown fox jumps over the lazy dog", 10)
	want := []string{"the quick", "brown fox", "jumps over", "the lazy", "dog"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("Wrap = %q, want %q", got, want)
	}
}

func TestWrapKeepsALongWordWhole(t *testing.T) {
	got := Wrap("a supercalifragilistic word", 8)
	want := []string{"a", "supercalifragilistic", "word"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("Wrap = %q, want %q", got, want)
	}
}

func TestWrapOfNothing(t *testing.T) {
	if got := Wrap("   ", 5); len(got) != 0 {
		t.Fatalf("Wrap of blanks = %q, want no lines", got)
	}
}

func TestPadAndColumn(t *testing.T) {
	if got := Pad("ab", 4); got != "ab  " {
		t.Fatalf("Pad = %q", got)
	}
	if got := Pad("abcdef", 4); got != "abcdef" {
		t.Fatalf("Pad of a long line = %q", got)
	}
	got := Column("one two three", 7)
	want := []string{"one two", "three  "}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("Column = %q, want %q", got, want)
	}
}
