variable "region" {
  description = "AWS region for every resource."
  type        = string
  default     = "us-east-1"
}

variable "cluster_name" {
  description = "Name prefix of every resource; also the bucket prefix the brokers write under."
  type        = string
  default     = "tiered-mq"
  validation {
    condition     = can(regex("^[a-z0-9][a-z0-9-]{1,30}$", var.cluster_name))
    error_message = "cluster_name: 2-31 lower-case letters, digits or dashes."
  }
}

variable "bucket_name" {
  description = "S3 bucket of the cold tier (globally unique)."
  type        = string
}

variable "vpc_cidr" {
  description = "CIDR of the VPC."
  type        = string
  default     = "10.42.0.0/16"
}

variable "availability_zones" {
  description = "Three AZs: one private subnet (and one ZooKeeper node) per AZ."
  type        = list(string)
  default     = ["us-east-1a", "us-east-1b", "us-east-1c"]
  validation {
    condition     = length(var.availability_zones) == 3
    error_message = "Give exactly three availability zones."
  }
}

variable "client_cidrs" {
  description = "CIDRs allowed to reach the brokers' Kafka port (clients inside the VPC by default)."
  type        = list(string)
  default     = ["10.42.0.0/16"]
}

variable "ami_id" {
  description = "AMI for all instances (Debian 12 or Ubuntu 24.04, with python3 and apt)."
  type        = string
}

variable "broker_instance_type" {
  description = "Instance type of the brokers (local NVMe or gp3 holds the hot tier)."
  type        = string
  default     = "m6i.large"
}

variable "zookeeper_instance_type" {
  description = "Instance type of the ZooKeeper nodes."
  type        = string
  default     = "t3.medium"
}

variable "broker_count" {
  description = "Number of brokers (the Auto Scaling group's desired size)."
  type        = number
  default     = 3
}

variable "broker_volume_size_gb" {
  description = "Size of each broker's data volume (hot tier)."
  type        = number
  default     = 200
}

variable "package_spec" {
  description = "pip requirement the brokers install (a PyPI version or a wheel URL in your own artifact store)."
  type        = string
  default     = "tiered-mq==0.1.0"
}

variable "kafka_port" {
  description = "Port of the Kafka listener."
  type        = number
  default     = 9092
}
