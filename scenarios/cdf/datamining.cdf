# DataMining: flow sizes of the data-mining cluster measured for VL2.
# Source: A. Greenberg et al., "VL2: A Scalable and Flexible Data Center Network", SIGCOMM 2009;
# points as published with HKUST-SING/TrafficGenerator (VL2_CDF.txt).
# Format: "size_in_bytes cumulative_fraction" per line (see websearch.cdf). Mean about 12.7 MB
# (dominated by the 2 % of flows between 100 MB and 1 GB).
0 0
180 0.1
216 0.2
560 0.3
900 0.4
1100 0.5
1870 0.6
3160 0.7
10000 0.8
400000 0.9
3160000 0.95
100000000 0.98
1000000000 1
