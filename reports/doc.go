// Package reports formats results: terminal tables (tablewriter), plots
// (gonum/plot, PNG and SVG), JSON and CSV, Chrome trace files and the
// self-contained HTML report. Files are written atomically.
//
// It is the only package besides cmd/zerosim that formats output.
package reports
