// Package banded holds banded matrices in the "tall and thin" column-major
// storage of SPIKE::GPU and their CPU solvers: LU with partial pivoting
// (LAPACK gbsv semantics, the accuracy oracle) and LU and UL without
// pivoting with diagonal boosting (the factorizations truncated SPIKE uses
// on its diagonal blocks).
package banded
