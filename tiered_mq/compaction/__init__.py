"""compaction"""
