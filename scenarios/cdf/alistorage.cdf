# Alibaba storage 2019: flow sizes of Alibaba's storage service.
# Source: Y. Li et al., "HPCC: High Precision Congestion Control", SIGCOMM 2019; points as
# published with HPCC's traffic generator (AliStorage2019.txt, in percent there).
# Format: "size_in_bytes cumulative_fraction" per line (see websearch.cdf). The first point is a
# point mass: 22.93 % of flows are 4,000 bytes. Mean about 41 KB.
4000 0.2293
8000 0.6921
16000 0.8061
32000 0.9047
64000 0.9353
128000 0.9677
256000 0.9753
2000000 1
