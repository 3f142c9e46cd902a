# WebSearch: the background-flow sizes of the DCTCP paper's production cluster.
# Source: M. Alizadeh et al., "Data Center TCP (DCTCP)", SIGCOMM 2010 (measured on a
# 6,000-server web-search cluster); the same published points are used by HPCC's traffic
# generator (WebSearch_distribution.txt) and HKUST-SING/TrafficGenerator (DCTCP_CDF.txt).
# Format (ccsim's, for every CDF file): one point per line, "size_in_bytes cumulative_fraction",
# sizes not decreasing, fractions not decreasing in 0..1, the last fraction 1; between points
# the CDF is linear; '#' starts a comment. Mean 1,711,250 bytes.
0 0
10000 0.15
20000 0.20
30000 0.30
50000 0.40
80000 0.53
200000 0.60
1000000 0.70
2000000 0.80
5000000 0.90
10000000 0.97
30000000 1
