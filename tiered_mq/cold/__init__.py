"""cold"""
