"""coordination"""
