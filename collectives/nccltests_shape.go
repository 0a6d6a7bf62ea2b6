package collectives

import "fmt"

// Shape sets l's Ranks and Nodes for a caller that gives nodes and
// gpusPerNode (calibrate's --nodes and --gpus-per-node; 0: not given).
// The flags win over what is inferred (the devices block's distinct
// hosts, which containers or a shared hostname can miscount, or the ranks
// busbw/algbw allows); a flag that contradicts what the log proves (the
// devices block's rank lines, the printed busbw/algbw) is refused naming
// the flag and the line that proves it. Its errors name file:line and
// wrap ErrLog.
func (l *Log) Shape(nodes, gpusPerNode int) error {
	switch {
	case nodes > 0 && gpusPerNode > 0:
		if err := l.contradicts(nodes, gpusPerNode); err != nil {
			return err
		}
		l.Ranks, l.Nodes = nodes*gpusPerNode, nodes
	case nodes > 0:
		if l.Ranks > 0 && l.Ranks%nodes != 0 {
			return l.fail(l.ranksLine(), "the log ran %d ranks, which --nodes %d cannot share evenly (fix --nodes, or give --gpus-per-node)", l.Ranks, nodes)
		}
		l.Nodes = nodes
	case gpusPerNode > 0:
		if l.Ranks == 0 {
			l.Ranks = l.onlyMultiple(gpusPerNode)
		}
		if l.Ranks > 0 && l.Ranks%gpusPerNode != 0 {
			return l.fail(l.ranksLine(), "the log ran %d ranks, which --gpus-per-node %d does not divide (fix --gpus-per-node, or give --nodes)", l.Ranks, gpusPerNode)
		}
		if l.Ranks > 0 {
			l.Nodes = l.Ranks / gpusPerNode
		}
	}
	if l.Ranks > 0 && l.Nodes > 0 && l.Ranks%l.Nodes != 0 {
		return l.fail(l.ranksLine(), "the log ran %d ranks, which %d nodes cannot share evenly (fix --nodes or --gpus-per-node)", l.Ranks, l.Nodes)
	}
	if l.Ranks < 1 || l.Nodes < 1 {
		return l.fail(l.Line, "%s: %s", l.unknownShape(), shapeAdvice(nodes, gpusPerNode))
	}
	return nil
}

// shapeAdvice says which flags tell a log's shape, given those passed.
// One --nodes is wrong for logs of several node counts (the 2- and 4-node
// logs docs/calibration.md calibrates together, which --gpus-per-node 8
// alone shapes), so --nodes is advised for a single log only (QA19 L11:
// "pass --nodes and --gpus-per-node" could not be followed for two logs).
func shapeAdvice(nodes, gpusPerNode int) string {
	switch {
	case gpusPerNode > 0:
		return "pass --nodes too (and calibrate this log on its own if the others ran on other node counts)"
	case nodes > 0:
		return "pass --gpus-per-node too"
	}
	return "pass --gpus-per-node (and --nodes for a single log)"
}

func (l *Log) fail(line int, format string, a ...any) error {
	return failAt(l.File, line, 0, format, a...)
}

// ranksLine is the line that tells l's rank count: the devices block,
// else the row whose busbw/algbw bounds it, else the column header.
func (l *Log) ranksLine() int {
	switch {
	case l.DevicesLine > 0:
		return l.DevicesLine
	case l.RanksMinLine > 0:
		return l.RanksMinLine
	}
	return l.Line
}

// contradicts refuses the nodes × gpusPerNode ranks the log rules out:
// its devices block's rank lines, or a row's busbw/algbw.
func (l *Log) contradicts(nodes, gpusPerNode int) error {
	n := nodes * gpusPerNode
	flags := fmt.Sprintf("--nodes %d × --gpus-per-node %d = %d", nodes, gpusPerNode, n)
	switch {
	case l.DevicesLine > 0 && n != l.Ranks:
		return l.fail(l.DevicesLine, "the log's \"# Using devices\" block lists %d ranks, not %s (fix --nodes or --gpus-per-node)", l.Ranks, flags)
	case l.RanksMin > 0 && n < l.RanksMin:
		return l.fail(l.RanksMinLine, "the row's busbw/algbw needs at least %d ranks, not %s (fix --nodes or --gpus-per-node)", l.RanksMin, flags)
	case l.RanksMin > 0 && n > l.RanksMax:
		return l.fail(l.RanksMaxLine, "the row's busbw/algbw allows at most %d ranks, not %s (fix --nodes or --gpus-per-node)", l.RanksMax, flags)
	}
	return nil
}

// onlyMultiple is the one count of ranks busbw/algbw allows that
// gpusPerNode divides, 0 when none or several.
func (l *Log) onlyMultiple(gpusPerNode int) int {
	if l.RanksMin == 0 || l.RanksMax-l.RanksMin >= maxFlagRanks {
		return 0
	}
	found := 0
	for n := l.RanksMin; n <= l.RanksMax; n++ {
		if n%gpusPerNode == 0 {
			if found > 0 {
				return 0
			}
			found = n
		}
	}
	return found
}

// maxFlagRanks bounds the range of rank counts Shape searches for the one
// multiple of --gpus-per-node.
const maxFlagRanks = 1 << 16

// unknownShape says what l lacks to give its ranks and nodes.
func (l *Log) unknownShape() string {
	if l.Ranks == 0 && l.RanksMin > 0 && l.RanksMax < MaxRanks {
		return fmt.Sprintf("the log does not tell its nodes and GPUs per node (no \"# Using devices\" block; its busbw/algbw allows %d to %d ranks)", l.RanksMin, l.RanksMax)
	}
	return "the log does not tell its nodes and GPUs per node (no \"# Using devices\" block)"
}
