"""For puzzle authors: the curriculum checked against itself.

curriculum (`workbook author verify`: skeletons, solutions and wrong kernels stay what they
claim to be), differential (each kernel on the simulator and on a GPU, findings compared).

Imports: every layer up to check.
"""
