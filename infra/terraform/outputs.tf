output "bucket" {
  description = "Cold-tier bucket."
  value       = aws_s3_bucket.cold.bucket
}

output "cold_tier_url" {
  description = "The brokers' cold tier (and Spark's `path` option)."
  value       = "s3://${aws_s3_bucket.cold.bucket}/${local.cold_prefix}"
}

output "zookeeper_connect" {
  description = "ZooKeeper connect string."
  value       = local.zookeeper_connect
}

output "broker_asg_name" {
  description = "Auto Scaling group of the brokers (list instance IPs with aws autoscaling/ec2)."
  value       = aws_autoscaling_group.broker.name
}

output "broker_security_group_id" {
  description = "Attach clients to this group's rules or add their CIDRs to client_cidrs."
  value       = aws_security_group.broker.id
}

output "broker_role_arn" {
  description = "IAM role of the brokers."
  value       = aws_iam_role.broker.arn
}

output "vpc_id" {
  value = aws_vpc.main.id
}
