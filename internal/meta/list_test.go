package meta

import (
	"fmt"
	"slices"
	"testing"
)

func TestListTopicsPagination(t *testing.T) {
	t.Parallel()
	s := newLeader(t)
	const n = 250
	createMany(t, s, "t", n)

	var seen []string
	pages := 0
	after := ""
	for {
		page, next := s.ListTopics(after, 100)
		pages++
		for _, tp := range page {
			seen = append(seen, tp.Name)
		}
		if next == "" {
			break
		}
		if len(page) != 100 || next != page[len(page)-1].Name {
			t.Fatalf("page %d: %d topics, next %q", pages, len(page), next)
		}
		after = next
		if pages > 10 {
			t.Fatal("pagination does not end")
		}
	}
	if pages != 3 {
		t.Fatalf("%d pages, want 3", pages)
	}
	want := make([]string, n)
	for i := range want {
		want[i] = fmt.Sprintf("t-%04d", i)
	}
	if !slices.Equal(seen, want) { // no duplicates, no gaps, in order
		t.Fatalf("pages gave %d names, want %d in order", len(seen), n)
	}

	// Exactly full last page: no dangling token.
	if page, next := s.ListTopics("t-0149", 100); len(page) != 100 || next != "" {
		t.Fatalf("last full page: %d topics, next %q", len(page), next)
	}
	// A token between names (the topic was deleted meanwhile) still works.
	if page, _ := s.ListTopics("t-0099x", 1); len(page) != 1 || page[0].Name != "t-0100" {
		t.Fatalf("token between names: %+v", page)
	}
	if page, next := s.ListTopics("zzz", 100); len(page) != 0 || next != "" {
		t.Fatalf("past the end: %d, %q", len(page), next)
	}
	if page, _ := s.ListTopics("", 0); len(page) != 100 {
		t.Fatalf("default limit gave %d", len(page))
	}
	if all := s.Topics(); len(all) != n || !slices.IsSortedFunc(all, func(a, b Topic) int {
		if a.Name < b.Name {
			return -1
		}
		return 1
	}) {
		t.Fatalf("Topics(): %d, sorted=%v", len(all), false)
	}
}
