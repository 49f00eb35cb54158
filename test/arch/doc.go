// Package arch holds the check of the project's one-way import arrows: a
// test that reads the module's import graph (go list) and refuses any
// import between our packages that the table of allowed edges does not
// name. The table is the one at the end of the architecture document,
// extended with the packages added since; a new edge is a design decision,
// made in the table first, never by adding an import.
//
// # The invariant
//
// Every import edge between two of our packages, in production code and in
// tests, is either allowed by the table or listed as a known violation to
// remove; every known violation still exists (one that is gone is deleted
// from the list, so the list never hides a new edge of the same name);
// every package of the module has a row.
package arch
