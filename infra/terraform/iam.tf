# Broker role: S3 access limited to the cluster's prefix of the cold-tier bucket
# (list only under the prefix; get/put/delete only objects under it), nothing else.

locals {
  cold_prefix = var.cluster_name
}

data "aws_iam_policy_document" "ec2_assume" {
  statement {
    actions = ["sts:AssumeRole"]
    principals {
      type        = "Service"
      identifiers = ["ec2.amazonaws.com"]
    }
  }
}

data "aws_iam_policy_document" "broker_s3" {
  statement {
    sid       = "ListClusterPrefix"
    actions   = ["s3:ListBucket"]
    resources = [aws_s3_bucket.cold.arn]
    condition {
      test     = "StringLike"
      variable = "s3:prefix"
      values   = ["${local.cold_prefix}/*", local.cold_prefix]
    }
  }
  statement {
    sid = "ReadWriteClusterObjects"
    actions = [
      "s3:GetObject",
      "s3:PutObject",
      "s3:DeleteObject",
      "s3:AbortMultipartUpload",
      "s3:ListMultipartUploadParts",
    ]
    resources = ["${aws_s3_bucket.cold.arn}/${local.cold_prefix}/*"]
  }
}

resource "aws_iam_role" "broker" {
  name               = "${var.cluster_name}-broker"
  assume_role_policy = data.aws_iam_policy_document.ec2_assume.json
}

resource "aws_iam_role_policy" "broker_s3" {
  name   = "cold-tier"
  role   = aws_iam_role.broker.id
  policy = data.aws_iam_policy_document.broker_s3.json
}

resource "aws_iam_instance_profile" "broker" {
  name = "${var.cluster_name}-broker"
  role = aws_iam_role.broker.name
}

# ZooKeeper nodes need no AWS API access; the role exists for SSM-less parity and tagging.
resource "aws_iam_role" "zookeeper" {
  name               = "${var.cluster_name}-zookeeper"
  assume_role_policy = data.aws_iam_policy_document.ec2_assume.json
}

resource "aws_iam_instance_profile" "zookeeper" {
  name = "${var.cluster_name}-zookeeper"
  role = aws_iam_role.zookeeper.name
}
