# Facebook Hadoop: flow sizes of a Hadoop cluster at Facebook.
# Source: A. Roy et al., "Inside the Social Network's (Datacenter) Network", SIGCOMM 2015;
# points as published with HPCC's traffic generator (FbHdp_distribution.txt, in percent there).
# Format: "size_in_bytes cumulative_fraction" per line (see websearch.cdf). The first point is a
# point mass: 1 % of flows are 100 bytes. Mean about 120 KB.
100 0.01
200 0.02
300 0.05
350 0.15
400 0.20
500 0.30
600 0.40
700 0.50
1000 0.60
2000 0.67
7000 0.70
30000 0.72
50000 0.82
80000 0.87
120000 0.90
300000 0.95
1000000 0.975
2000000 0.99
10000000 1
