# Compares Auto before (bandsolve-ae7bff3) and after (bandsolve) in run 9:
# the median µs of each of the two rounds, and before/after of the better
# round. Usage: python3 compare.py (in run9/).
import csv, collections
d = collections.defaultdict(dict)
for b in ['bandsolve-ae7bff3', 'bandsolve']:
    for r in (1, 2):
        rows = (l for l in open(f'{b}-{r}.csv') if not l.startswith('#'))
        for row in csv.DictReader(rows):
            key = (row['precision'], row['layout'], int(row['N']), int(row['G']), row['constant'])
            d[key].setdefault(b, []).append(float(row['median_us']))
print("%-4s %-11s %5s %5s %-5s %13s %13s %6s" % ("prec", "layout", "N", "G", "const", "before µs", "after µs", "gain"))
for k in sorted(d, key=lambda k: (k[1], k[2] * k[3], k[2], k[4], k[0])):
    o, n = d[k]['bandsolve-ae7bff3'], d[k]['bandsolve']
    print("%-4s %-11s %5d %5d %-5s %13s %13s %5.2fx" % (k + (" / ".join("%.1f" % x for x in o), " / ".join("%.1f" % x for x in n), min(o) / min(n))))
