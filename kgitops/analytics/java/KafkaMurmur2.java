package kgitops.spark;

import org.apache.spark.sql.api.java.UDF1;

/**
 * Kafka's default partitioner hash, as a Spark SQL function: {@code kafka_murmur2(binary)}.
 *
 * <p>Exactly {@code org.apache.kafka.common.utils.Utils.murmur2}: seed 0x9747b28c, m 0x5bd1e995,
 * r 24, little-endian 4-byte blocks, then the tail and the final mix. Returns the signed 32-bit
 * hash; the caller takes {@code (h & 0x7fffffff) % n} as Kafka's {@code toPositive} does.
 * String keys are hashed as their UTF-8 bytes ({@code cast(key AS binary)}), as Kafka's
 * StringSerializer sends them. A null key gives null: Kafka does not hash null keys.
 */
public final class KafkaMurmur2 implements UDF1<byte[], Integer> {
    private static final long serialVersionUID = 1L;

    @Override
    public Integer call(byte[] data) {
        if (data == null) {
            return null;
        }
        return hash(data);
    }

    public static int hash(byte[] data) {
        final int length = data.length;
        final int seed = 0x9747b28c;
        final int m = 0x5bd1e995;
        final int r = 24;
        int h = seed ^ length;
        final int length4 = length / 4;
        for (int i = 0; i < length4; i++) {
            final int i4 = i * 4;
            int k = (data[i4] & 0xff) + ((data[i4 + 1] & 0xff) << 8)
                    + ((data[i4 + 2] & 0xff) << 16) + ((data[i4 + 3] & 0xff) << 24);
            k *= m;
            k ^= k >>> r;
            k *= m;
            h *= m;
            h ^= k;
        }
        switch (length % 4) {
            case 3:
                h ^= (data[(length & ~3) + 2] & 0xff) << 16;
            case 2:
                h ^= (data[(length & ~3) + 1] & 0xff) << 8;
            case 1:
                h ^= data[length & ~3] & 0xff;
                h *= m;
            default:
                break;
        }
        h ^= h >>> 13;
        h *= m;
        h ^= h >>> 15;
        return h;
    }
}
